#pragma once
// Text shaping for the scripts that need it (Arabic, Hebrew, the Indic scripts, Thai,
// combining marks): FriBidi orders a line by direction and HarfBuzz shapes each run.
// Both are opened with dlopen the first time a text needs them, so a lock screen whose
// texts are Latin, Greek, Cyrillic or CJK loads neither (HarfBuzz brings GLib, PCRE2 and
// Graphite2: about 1.1 MB of Pss that such a screen would carry for nothing).
#include <stdint.h>

// One glyph: the same layout as cairo_glyph_t (index, x, y), so that the array can be
// given to cairo as it is.
typedef struct {
    unsigned long index;
    double x;
    double y;
} tl_glyph;

// A shaped line: glyphs in visual order, left to right, placed from a pen at x = 0 on
// the baseline y = 0 (y grows downwards, as in cairo).
typedef struct {
    tl_glyph *glyphs;
    int count;
    double advance;   // the pen's advance over the whole line, in px
    int rtl;          // 1: the paragraph's direction (its first strong character) is right to left
} tl_shaped;

// Opens libfribidi.so.0 and libharfbuzz.so.0. 0, or a negative errno with *why saying
// what failed (static text): -ELIBACC when a library cannot be loaded, -ENOSYS when one
// lacks a function used.
int tl_shape_load(const char **why);

// Shapes `length` characters of `text` (UTF-32, in logical order) set in `ft_face` (a
// FreeType FT_Face, the face cairo draws with) at `size` px. 0, or a negative errno with
// *why saying what failed. On success `out` owns its glyphs: tl_shaped_free.
int tl_shape(void *ft_face, double size, const uint32_t *text, int length, tl_shaped *out, const char **why);
void tl_shaped_free(tl_shaped *shaped);


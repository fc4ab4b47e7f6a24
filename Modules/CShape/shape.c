#define _GNU_SOURCE
#include "shape.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <fribidi.h>
#include <hb.h>
#include <hb-ft.h>
#include <hb-ot.h>

// The functions used, looked up with the types of their declarations.
#define FRIBIDI_SYMBOLS(X)                 \
    X(fribidi_get_bidi_types)              \
    X(fribidi_get_bracket_types)           \
    X(fribidi_get_par_embedding_levels_ex)
#define HARFBUZZ_SYMBOLS(X)                \
    X(hb_ft_face_create_referenced)        \
    X(hb_face_destroy)                     \
    X(hb_font_create)                      \
    X(hb_font_destroy)                     \
    X(hb_font_set_scale)                   \
    X(hb_ot_font_set_funcs)                \
    X(hb_buffer_create)                    \
    X(hb_buffer_destroy)                   \
    X(hb_buffer_allocation_successful)     \
    X(hb_buffer_add_utf32)                 \
    X(hb_buffer_clear_contents)            \
    X(hb_buffer_set_direction)             \
    X(hb_buffer_set_script)                \
    X(hb_buffer_set_language)              \
    X(hb_buffer_get_glyph_infos)           \
    X(hb_buffer_get_glyph_positions)       \
    X(hb_language_get_default)             \
    X(hb_unicode_funcs_get_default)        \
    X(hb_unicode_script)                   \
    X(hb_shape)

static struct {
    void *fribidi, *harfbuzz;
#define FIELD(name) __typeof__(&name) name;
    FRIBIDI_SYMBOLS(FIELD)
    HARFBUZZ_SYMBOLS(FIELD)
#undef FIELD
} lib;

static int open_library(const char *name, void **out, const char **why) {
    *out = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (*out == NULL) {
        *why = name[3] == 'f' ? "libfribidi.so.0 cannot be loaded" : "libharfbuzz.so.0 cannot be loaded";
        return -ELIBACC;
    }
    return 0;
}

// Loading and the face cache below are shared by every caller: one shapes at a time.
static pthread_mutex_t shaping = PTHREAD_MUTEX_INITIALIZER;

static int load(const char **why) {
    if (lib.harfbuzz != NULL) return 0;
    void *fribidi, *harfbuzz;
    int r = open_library("libfribidi.so.0", &fribidi, why);
    if (r < 0) return r;
    r = open_library("libharfbuzz.so.0", &harfbuzz, why);
    if (r < 0) {
        dlclose(fribidi);
        return r;
    }
#define LOOKUP(library, name)                                        \
    lib.name = (__typeof__(&name))dlsym(library, #name);             \
    if (lib.name == NULL) {                                          \
        *why = #library " has no " #name;                            \
        dlclose(harfbuzz);                                           \
        dlclose(fribidi);                                            \
        return -ENOSYS;                                              \
    }
#define LOOKUP_FRIBIDI(name) LOOKUP(fribidi, name)
#define LOOKUP_HARFBUZZ(name) LOOKUP(harfbuzz, name)
    FRIBIDI_SYMBOLS(LOOKUP_FRIBIDI)
    HARFBUZZ_SYMBOLS(LOOKUP_HARFBUZZ)
#undef LOOKUP_HARFBUZZ
#undef LOOKUP_FRIBIDI
#undef LOOKUP
    lib.fribidi = fribidi;
    lib.harfbuzz = harfbuzz;
    return 0;
}

// HarfBuzz's faces of the last FreeType faces shaped with: a face's tables are read and
// its lookups prepared once, not at every line. Each holds a reference to its FreeType
// face, which therefore outlives cairo's use of it while it is here.
enum { FACES = 8 };
static struct {
    void *ft;
    hb_face_t *hb;
} faces[FACES];
static int next_face;

static hb_face_t *face_for(void *ft) {
    for (int i = 0; i < FACES; i++)
        if (faces[i].ft == ft) return faces[i].hb;
    hb_face_t *hb = lib.hb_ft_face_create_referenced((FT_Face)ft);
    if (faces[next_face].hb != NULL) lib.hb_face_destroy(faces[next_face].hb);
    faces[next_face].ft = ft;
    faces[next_face].hb = hb;
    next_face = (next_face + 1) % FACES;
    return hb;
}

// A run: characters [start, start + length) of one embedding level and one script.
typedef struct {
    int start, length;
    FriBidiLevel level;
    hb_script_t script;
} run;

static int is_neutral_script(hb_script_t s) {
    return s == HB_SCRIPT_COMMON || s == HB_SCRIPT_INHERITED || s == HB_SCRIPT_UNKNOWN;
}

int tl_shape_load(const char **why) {
    pthread_mutex_lock(&shaping);
    int r = load(why);
    pthread_mutex_unlock(&shaping);
    return r;
}

static int shape(void *ft_face, double size, const uint32_t *text, int length, tl_shaped *out, const char **why);

int tl_shape(void *ft_face, double size, const uint32_t *text, int length, tl_shaped *out, const char **why) {
    pthread_mutex_lock(&shaping);
    int r = shape(ft_face, size, text, length, out, why);
    pthread_mutex_unlock(&shaping);
    return r;
}

static int shape(void *ft_face, double size, const uint32_t *text, int length, tl_shaped *out, const char **why) {
    memset(out, 0, sizeof *out);
    int r = load(why);
    if (r < 0) return r;
    if (length <= 0) return 0;
    r = -ENOMEM;
    *why = "out of memory";
    FriBidiCharType *types = malloc(sizeof *types * (size_t)length);
    FriBidiBracketType *brackets = malloc(sizeof *brackets * (size_t)length);
    FriBidiLevel *levels = malloc(sizeof *levels * (size_t)length);
    hb_script_t *scripts = malloc(sizeof *scripts * (size_t)length);
    run *runs = malloc(sizeof *runs * (size_t)length);
    hb_buffer_t *buffer = NULL;
    hb_font_t *font = NULL;
    if (types == NULL || brackets == NULL || levels == NULL || scripts == NULL || runs == NULL) goto done;

    // Levels by the Unicode bidirectional algorithm, the paragraph's direction from its
    // first strong character (rules P2, P3).
    const FriBidiChar *chars = (const FriBidiChar *)text;
    lib.fribidi_get_bidi_types(chars, length, types);
    lib.fribidi_get_bracket_types(chars, length, types, brackets);
    FriBidiParType direction = FRIBIDI_PAR_ON;
    if (lib.fribidi_get_par_embedding_levels_ex(types, brackets, length, &direction, levels) == 0) {
        r = -EINVAL;
        *why = "FriBidi could not order the text";
        goto done;
    }
    FriBidiLevel base = FRIBIDI_DIR_TO_LEVEL(direction);
    // Rule L1: whitespace at the end of the line takes the paragraph's level.
    for (int i = length - 1; i >= 0; i--) {
        FriBidiCharType t = types[i];
        if (!(FRIBIDI_IS_EXPLICIT_OR_BN(t) || t == FRIBIDI_TYPE_WS || t == FRIBIDI_TYPE_BS || t == FRIBIDI_TYPE_SS)) break;
        levels[i] = base;
    }

    // Scripts: a character of no script of its own (a space, a digit, a mark) belongs to
    // the run it is in, so it is shaped with its neighbours.
    hb_unicode_funcs_t *unicode = lib.hb_unicode_funcs_get_default();
    hb_script_t last = HB_SCRIPT_COMMON;
    for (int i = 0; i < length; i++) {
        scripts[i] = lib.hb_unicode_script(unicode, text[i]);
        if (is_neutral_script(scripts[i])) scripts[i] = last;
        else last = scripts[i];
    }
    for (int i = length - 1; i >= 0; i--) {
        if (is_neutral_script(scripts[i])) scripts[i] = last;
        else last = scripts[i];
    }

    // Runs in logical order, then in visual order (rule L2: from the highest level down
    // to the lowest odd one, every sequence of runs at that level or above is reversed).
    int count = 0;
    int highest = 0, lowestOdd = 127;
    for (int i = 0; i < length; i++) {
        if (count > 0 && runs[count - 1].level == levels[i] && runs[count - 1].script == scripts[i]) {
            runs[count - 1].length++;
            continue;
        }
        runs[count++] = (run){i, 1, levels[i], scripts[i]};
        if (levels[i] > highest) highest = levels[i];
        if ((levels[i] & 1) && levels[i] < lowestOdd) lowestOdd = levels[i];
    }
    for (int level = highest; level >= lowestOdd && level > 0; level--) {
        for (int i = 0; i < count;) {
            if (runs[i].level < level) { i++; continue; }
            int j = i;
            while (j < count && runs[j].level >= level) j++;
            for (int a = i, b = j - 1; a < b; a++, b--) {
                run t = runs[a]; runs[a] = runs[b]; runs[b] = t;
            }
            i = j;
        }
    }

    hb_face_t *face = face_for(ft_face);
    font = lib.hb_font_create(face);
    lib.hb_ot_font_set_funcs(font);
    // Positions in 1/64 px: the face's own metrics at this size, with no hinting.
    int scale = (int)lround(size * 64);
    lib.hb_font_set_scale(font, scale, scale);
    buffer = lib.hb_buffer_create();
    if (!lib.hb_buffer_allocation_successful(buffer)) goto done;

    int capacity = length + 8;
    out->glyphs = malloc(sizeof *out->glyphs * (size_t)capacity);
    if (out->glyphs == NULL) goto done;
    double pen = 0;
    hb_language_t language = lib.hb_language_get_default();
    for (int k = 0; k < count; k++) {
        hb_buffer_t *b = buffer;
        if (!lib.hb_buffer_allocation_successful(b)) goto done;
        // The whole line is the context, so letters join across a run's edge.
        lib.hb_buffer_add_utf32(b, text, length, (unsigned)runs[k].start, runs[k].length);
        lib.hb_buffer_set_direction(b, (runs[k].level & 1) ? HB_DIRECTION_RTL : HB_DIRECTION_LTR);
        lib.hb_buffer_set_script(b, runs[k].script);
        lib.hb_buffer_set_language(b, language);
        lib.hb_shape(font, b, NULL, 0);
        unsigned n = 0;
        hb_glyph_info_t *info = lib.hb_buffer_get_glyph_infos(b, &n);
        hb_glyph_position_t *pos = lib.hb_buffer_get_glyph_positions(b, NULL);
        if (out->count + (int)n > capacity) {
            capacity = out->count + (int)n + length;
            tl_glyph *more = realloc(out->glyphs, sizeof *more * (size_t)capacity);
            if (more == NULL) goto done;
            out->glyphs = more;
        }
        for (unsigned g = 0; g < n; g++) {
            out->glyphs[out->count++] = (tl_glyph){
                info[g].codepoint, pen + pos[g].x_offset / 64.0, -pos[g].y_offset / 64.0};
            pen += pos[g].x_advance / 64.0;
        }
        lib.hb_buffer_clear_contents(b);
    }
    out->advance = pen;
    out->rtl = base & 1;
    r = 0;
    *why = NULL;

done:
    if (r < 0) tl_shaped_free(out);
    if (buffer != NULL) lib.hb_buffer_destroy(buffer);
    if (font != NULL) lib.hb_font_destroy(font);
    free(runs);
    free(scripts);
    free(levels);
    free(brackets);
    free(types);
    return r;
}

void tl_shaped_free(tl_shaped *shaped) {
    free(shaped->glyphs);
    memset(shaped, 0, sizeof *shaped);
}

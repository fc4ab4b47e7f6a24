#pragma once
#include <cairo/cairo.h>
/* Text goes through cairo's FreeType backend with faces chosen by fontconfig, so a
   label's characters pick a font that has them (CJK included), or read from a font
   file named in the config (fcfreetype.h: its characters looked up). */
#include <cairo/cairo-ft.h>
#include <fontconfig/fontconfig.h>
#include <fontconfig/fcfreetype.h>

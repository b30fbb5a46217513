/* theme.c: the colours of the light and dark themes and each head's accent
 * colour. Only colours: which rectangle gets which colour is for the panels
 * and overlays; the heatmap colormaps are colormap.c's. */
#include "view.h"
#include "view_internal.h"

static rgba hex(unsigned v) {
    return (rgba){(unsigned char)(v >> 16), (unsigned char)(v >> 8), (unsigned char)v, 255};
}

/* grid: the frames of matrices, colorbars and buttons; at least 3:1 against the
   background, so a heatmap's edge shows whatever its colormap (e.g. magma's black
   on the dark theme, a white corner of greys on the light one). */
view_theme view_theme_get(int theme) {
    view_theme t;
    if (theme) {
        t = (view_theme){hex(0x111418), hex(0x1c2128), hex(0xe6edf3), hex(0xa0aab6), hex(0x8b949e),
                         hex(0x79c0ff), hex(0x2d333b), hex(0xe6edf3), hex(0xf0f3f6), hex(0x000000)};
        t.tooltip_bg.a = 245;
        t.overlay.a = 200;
    } else {
        t = (view_theme){hex(0xffffff), hex(0xf3f4f6), hex(0x111827), hex(0x4b5563), hex(0x8c939d),
                         hex(0x1d4ed8), hex(0xe5e7eb), hex(0x111827), hex(0x111827), hex(0x000000)};
        t.tooltip_bg.a = 240;
        t.overlay.a = 150;
    }
    return t;
}

rgba view_head_color(int i, int theme) {
    /* Eight colours from the Okabe-Ito, Paul Tol and IBM colour-blind-safe sets,
       chosen per theme so that every pair stays apart (CIE Lab distance at least
       26) for normal vision and simulated deuteranopia and protanopia, and each
       has at least 3:1 contrast with the background (titles and heatmap frames).
       Neighbours are ordered to differ most. Past eight heads the colours repeat:
       the head numbers in the titles and bands tell them apart. */
    static const unsigned light[8] = {0x4477aa, 0xfe6100, 0x000000, 0x648fff,
                                      0xee6677, 0x332288, 0x882255, 0x8b4513};
    static const unsigned dark[8] = {0x66ccee, 0xf0e442, 0x785ef0, 0x009e73,
                                     0xd55e00, 0x0072b2, 0xddcc77, 0x0f7c8a};
    return hex((theme ? dark : light)[((i % 8) + 8) % 8]);
}

rgba view_highlight_color(int theme) {
    return theme ? hex(0xffffff) : hex(0xff2d55);
}

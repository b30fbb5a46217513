/* theme.c: the colours of the light and dark themes and each head's accent
 * colour. Only colours: which rectangle gets which colour is for the panels
 * and overlays; the heatmap colormaps are colormap.c's. */
#include "view.h"
#include "view_internal.h"

static rgba hex(unsigned v) {
    return (rgba){(unsigned char)(v >> 16), (unsigned char)(v >> 8), (unsigned char)v, 255};
}

view_theme view_theme_get(int theme) {
    view_theme t;
    if (theme) {
        t = (view_theme){hex(0x111418), hex(0x1c2128), hex(0xe6edf3), hex(0xa0aab6), hex(0x3d444d),
                         hex(0x79c0ff), hex(0x2d333b), hex(0xe6edf3), hex(0xf0f3f6), hex(0x000000)};
        t.tooltip_bg.a = 245;
        t.overlay.a = 200;
    } else {
        t = (view_theme){hex(0xffffff), hex(0xf3f4f6), hex(0x111827), hex(0x4b5563), hex(0xd1d5db),
                         hex(0x1d4ed8), hex(0xe5e7eb), hex(0x111827), hex(0x111827), hex(0x000000)};
        t.tooltip_bg.a = 240;
        t.overlay.a = 150;
    }
    return t;
}

rgba view_head_color(int i, int theme) {
    /* Tableau 10, the same order as matplotlib's tab10 */
    static const unsigned light[10] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd,
                                       0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf};
    static const unsigned dark[10] = {0x5fa8e8, 0xffa552, 0x5ccf5c, 0xf06565, 0xb993e0,
                                      0xc08a7e, 0xf0a0d8, 0xb0b0b0, 0xdada4a, 0x4fd8e6};
    return hex((theme ? dark : light)[((i % 10) + 10) % 10]);
}

rgba view_highlight_color(int theme) {
    return theme ? hex(0xffffff) : hex(0xff2d55);
}

/* colormap.c: colormaps as 11 anchor colours, linearly interpolated in sRGB.
 * Anchors are matplotlib's viridis, magma and cividis sampled at 0, 0.1, ... 1, a
 * linear grey ramp, and ColorBrewer's RdBu (reversed) for the diverging map; the
 * signed grey ramp is computed from CIE L*. */
#include "colormap.h"

#include <math.h>
#include <string.h>

static const unsigned seq_anchor[CMAP_COUNT][11] = {
    /* viridis */
    {0x440154, 0x482475, 0x414487, 0x355f8d, 0x2a788e, 0x21918c, 0x22a884, 0x44bf70, 0x7ad151,
     0xbddf26, 0xfde725},
    /* magma */
    {0x000004, 0x140e36, 0x3b0f70, 0x641a80, 0x8c2981, 0xb73779, 0xde4968, 0xf7705c, 0xfe9f6d,
     0xfecf92, 0xfcfdbf},
    /* cividis */
    {0x00224e, 0x123570, 0x3b496c, 0x575d6d, 0x707173, 0x8a8779, 0xa69d75, 0xc4b56c, 0xe4cf5b,
     0xf6e04f, 0xfee838},
    /* greys: white (0) to black (1), readable when printed in greyscale */
    {0xffffff, 0xe6e6e6, 0xcccccc, 0xb3b3b3, 0x999999, 0x808080, 0x666666, 0x4d4d4d, 0x333333,
     0x1a1a1a, 0x000000},
};

static const unsigned div_anchor[9] = {0x053061, 0x2166ac, 0x4393c3, 0x92c5de, 0xf7f7f7,
                                       0xf4a582, 0xd6604d, 0xb2182b, 0x67001f};

static const char *names[CMAP_COUNT] = {"viridis", "magma", "cividis", "greys"};

const char *cmap_name(int i) {
    return i >= 0 && i < CMAP_COUNT ? names[i] : NULL;
}

int cmap_find(const char *name) {
    for (int i = 0; i < CMAP_COUNT; i++)
        if (strcmp(name, names[i]) == 0) return i;
    return -1;
}

const char *cmap_names_list(void) {
    return "viridis, magma, cividis, greys";
}

/* lroundf(v) for 0 <= v < 2^24, without the library call (heatmaps colour
   millions of cells): v + 0.5 is exact in double, so truncating it rounds half
   away from zero as lroundf does (in float, 0.49999997f + 0.5f would round up). */
static inline unsigned char round_channel(float v) {
    return (unsigned char)(int)((double)v + 0.5);
}

static rgba lerp_anchors(const unsigned *a, int count, float t) {
    if (!(t > 0.0f)) t = 0.0f; /* also catches NaN */
    if (t > 1.0f) t = 1.0f;
    float pos = t * (float)(count - 1);
    int i = (int)pos; /* pos >= 0: truncation is floorf */
    if (i >= count - 1) i = count - 2;
    float f = pos - (float)i;
    unsigned c0 = a[i], c1 = a[i + 1];
    rgba out;
    out.r = round_channel((float)((c0 >> 16) & 255) * (1 - f) + (float)((c1 >> 16) & 255) * f);
    out.g = round_channel((float)((c0 >> 8) & 255) * (1 - f) + (float)((c1 >> 8) & 255) * f);
    out.b = round_channel((float)(c0 & 255) * (1 - f) + (float)(c1 & 255) * f);
    out.a = 255;
    return out;
}

rgba cmap_seq(int i, float t) {
    if (i < 0 || i >= CMAP_COUNT) i = 0;
    return lerp_anchors(seq_anchor[i], 11, t);
}

rgba cmap_div(float t) {
    if (isnan(t)) t = 0.0f;
    return lerp_anchors(div_anchor, 9, (t + 1.0f) * 0.5f);
}

/* sRGB byte for linear light y in [0, 1] */
static unsigned char srgb_byte(double y) {
    double c = y <= 0.0031308 ? 12.92 * y : 1.055 * pow(y, 1.0 / 2.4) - 0.055;
    long v = lround(c * 255.0);
    return (unsigned char)(v < 0 ? 0 : (v > 255 ? 255 : v));
}

rgba cmap_signed(int cmap, float t) {
    if (cmap != CMAP_GREYS) return cmap_div(t);
    if (isnan(t)) t = 0.0f;
    if (t < -1.0f) t = -1.0f;
    if (t > 1.0f) t = 1.0f;
    /* L* from 12 (t = -1) to 96 (t = +1), then the luminance Y that has it */
    double l = 54.0 + 42.0 * (double)t;
    double f = (l + 16.0) / 116.0;
    double y = f > 6.0 / 29.0 ? f * f * f : (l / (24389.0 / 27.0));
    unsigned char g = srgb_byte(y);
    return (rgba){g, g, g, 255};
}

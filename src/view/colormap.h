/* colormap.h: the sequential maps for attention probabilities (fixed [0, 1]) and the
 * maps for signed matrices (symmetric about zero). Pure data, no drawing. */
#ifndef MHAVIZ_COLORMAP_H
#define MHAVIZ_COLORMAP_H

typedef struct {
    unsigned char r, g, b, a;
} rgba;

enum { CMAP_VIRIDIS = 0, CMAP_MAGMA, CMAP_CIVIDIS, CMAP_GREYS, CMAP_COUNT };

/* Name of sequential map i ("viridis", ...); NULL when out of range. */
const char *cmap_name(int i);
/* Index of the map with that name, or -1. */
int cmap_find(const char *name);
/* "viridis, magma, cividis, greys", for messages. */
const char *cmap_names_list(void);

/* Sequential map i at t in [0, 1] (clamped; NaN gives the t = 0 colour). */
rgba cmap_seq(int i, float t);
/* Diverging blue-white-red map at t in [-1, 1] (clamped): 0 is near-white. */
rgba cmap_div(float t);
/* The map for signed values that goes with sequential map cmap, at t in [-1, 1]
 * (clamped; NaN gives 0): the diverging map, except with greys, where blue and red
 * of the same strength would print as the same grey: there a lightness ramp, dark
 * at -1, mid grey at 0, light at +1, even in CIE L* (12 to 96), so every value
 * keeps its own grey and the sign reads as darker or lighter than the middle. */
rgba cmap_signed(int cmap, float t);

#endif

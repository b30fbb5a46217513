/* colormap.h: the sequential maps for attention probabilities (fixed [0, 1]) and the
 * diverging map for signed matrices (symmetric about zero). Pure data, no drawing. */
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

#endif

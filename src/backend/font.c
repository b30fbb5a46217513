/* font.c: text for the backends. Finds DejaVu Sans (regular and bold) through
 * fontconfig, or uses --font; opens SDL2_ttf fonts per pixel size; falls back,
 * per character, to a font that has the glyph (CJK, for one) found by fontconfig.
 * Measures and renders UTF-8 runs; knows nothing of layout. */
#include "font.h"

#include <fontconfig/fontconfig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tok.h"

#define MAX_FACES 8 /* primary regular, primary bold, fallbacks */
#define MAX_OPEN 96 /* (face, size) pairs kept open */

typedef struct {
    int face, size;
    TTF_Font *font;
} open_font;

struct font_set {
    int fc_inited; /* FcInit called: FcFini on close */
    char paths[MAX_FACES][1024];
    int face_count;     /* 0 regular, 1 bold, 2.. fallbacks */
    int synthetic_bold; /* --font: bold by TTF style */
    open_font open[MAX_OPEN];
    int open_count;
    unsigned missing_cache[64]; /* code points no face has, to avoid repeated lookups */
    int missing_count;
};

static int fc_match(const char *pattern_str, char *out, size_t len) {
    FcPattern *pat = FcNameParse((const FcChar8 *)pattern_str);
    if (!pat) return -1;
    FcConfigSubstitute(NULL, pat, FcMatchPattern);
    FcDefaultSubstitute(pat);
    FcResult res;
    FcPattern *match = FcFontMatch(NULL, pat, &res);
    FcPatternDestroy(pat);
    if (!match) return -1;
    FcChar8 *file = NULL;
    int rc = -1;
    if (FcPatternGetString(match, FC_FILE, 0, &file) == FcResultMatch) {
        snprintf(out, len, "%s", (const char *)file);
        rc = 0;
    }
    FcPatternDestroy(match);
    return rc;
}

/* A font file that has code point cp, via fontconfig's charset matching. */
static int fc_match_char(unsigned cp, char *out, size_t len) {
    FcPattern *pat = FcPatternCreate();
    FcCharSet *cs = FcCharSetCreate();
    FcCharSetAddChar(cs, cp);
    FcPatternAddCharSet(pat, FC_CHARSET, cs);
    FcPatternAddString(pat, FC_FAMILY, (const FcChar8 *)"sans-serif");
    FcConfigSubstitute(NULL, pat, FcMatchPattern);
    FcDefaultSubstitute(pat);
    FcResult res;
    FcPattern *match = FcFontMatch(NULL, pat, &res);
    FcPatternDestroy(pat);
    int rc = -1;
    if (match) {
        FcCharSet *mcs = NULL;
        FcChar8 *file = NULL;
        if (FcPatternGetCharSet(match, FC_CHARSET, 0, &mcs) == FcResultMatch &&
            FcCharSetHasChar(mcs, cp) &&
            FcPatternGetString(match, FC_FILE, 0, &file) == FcResultMatch) {
            snprintf(out, len, "%s", (const char *)file);
            rc = 0;
        }
        FcPatternDestroy(match);
    }
    FcCharSetDestroy(cs);
    return rc;
}

font_set *font_set_open(const char *override, char *err, size_t errlen) {
    font_set *fs = calloc(1, sizeof *fs);
    if (!fs) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (override) {
        snprintf(fs->paths[0], sizeof fs->paths[0], "%s", override);
        snprintf(fs->paths[1], sizeof fs->paths[1], "%s", override);
        fs->synthetic_bold = 1;
    } else {
        fs->fc_inited = FcInit();
        if (!fs->fc_inited ||
            fc_match("DejaVu Sans:style=Book", fs->paths[0], sizeof fs->paths[0]) != 0 ||
            fc_match("DejaVu Sans:style=Bold", fs->paths[1], sizeof fs->paths[1]) != 0) {
            snprintf(err, errlen,
                     "no font found through fontconfig; install fonts-dejavu-core "
                     "or pass --font PATH");
            free(fs);
            return NULL;
        }
    }
    fs->face_count = 2;
    /* open both now, so a bad file is reported at start, not mid-frame */
    for (int f = 0; f < 2; f++) {
        TTF_Font *t = TTF_OpenFont(fs->paths[f], 16);
        if (!t) {
            snprintf(err, errlen, "cannot open font %s: %s", fs->paths[f], TTF_GetError());
            free(fs);
            return NULL;
        }
        TTF_CloseFont(t);
    }
    return fs;
}

void font_set_close(font_set *fs) {
    if (!fs) return;
    for (int i = 0; i < fs->open_count; i++) TTF_CloseFont(fs->open[i].font);
    if (fs->fc_inited) FcFini(); /* fontconfig's caches, so leak checkers see none */
    free(fs);
}

const char *font_set_path(const font_set *fs, int bold) {
    return fs->paths[bold ? 1 : 0];
}

static TTF_Font *get_font(font_set *fs, int face, int size) {
    if (size < 1) size = 1;
    for (int i = 0; i < fs->open_count; i++)
        if (fs->open[i].face == face && fs->open[i].size == size) return fs->open[i].font;
    TTF_Font *f = TTF_OpenFont(fs->paths[face], size);
    if (!f) return NULL;
    if (face == 1 && fs->synthetic_bold) TTF_SetFontStyle(f, TTF_STYLE_BOLD);
    TTF_SetFontHinting(f, TTF_HINTING_LIGHT);
    if (fs->open_count == MAX_OPEN) { /* evict the oldest */
        TTF_CloseFont(fs->open[0].font);
        memmove(fs->open, fs->open + 1, (MAX_OPEN - 1) * sizeof fs->open[0]);
        fs->open_count--;
    }
    fs->open[fs->open_count++] = (open_font){face, size, f};
    return f;
}

/* The face (0/1 primary, 2.. fallback) that draws cp at this size. */
static int face_for(font_set *fs, unsigned cp, int bold, int size) {
    int primary = bold ? 1 : 0;
    TTF_Font *p = get_font(fs, primary, size);
    if (!p || cp < 0x80 || TTF_GlyphIsProvided32(p, cp)) return primary;
    for (int f = 2; f < fs->face_count; f++) {
        TTF_Font *t = get_font(fs, f, size);
        if (t && TTF_GlyphIsProvided32(t, cp)) return f;
    }
    for (int i = 0; i < fs->missing_count; i++)
        if (fs->missing_cache[i] == cp) return primary;
    if (fs->face_count < MAX_FACES) {
        char path[1024];
        if (fc_match_char(cp, path, sizeof path) == 0) {
            for (int f = 0; f < fs->face_count; f++)
                if (strcmp(fs->paths[f], path) == 0) goto missing;
            snprintf(fs->paths[fs->face_count], sizeof fs->paths[0], "%s", path);
            fs->face_count++;
            return fs->face_count - 1;
        }
    }
missing:
    if (fs->missing_count < 64) fs->missing_cache[fs->missing_count++] = cp;
    return primary;
}

/* Splits text into runs of one face; calls fn for each run. */
typedef void (*run_fn)(void *ud, TTF_Font *f, int face, const char *run);

static void for_each_run(font_set *fs, const char *text, int size, int bold, run_fn fn, void *ud) {
    char buf[2048];
    const unsigned char *s = (const unsigned char *)text;
    size_t len = strlen(text);
    size_t i = 0;
    while (i < len) {
        size_t start = i, o = 0;
        unsigned cp = 0;
        int used = tok_decode_utf8(s + i, len - i, &cp);
        int face = face_for(fs, cp, bold, size);
        while (i < len && o + 8 < sizeof buf) {
            used = tok_decode_utf8(s + i, len - i, &cp);
            if (i > start && face_for(fs, cp, bold, size) != face) break;
            memcpy(buf + o, s + i, (size_t)used);
            o += (size_t)used;
            i += (size_t)used;
        }
        buf[o] = '\0';
        TTF_Font *f = get_font(fs, face, size);
        if (f) fn(ud, f, face, buf);
    }
}

typedef struct {
    int w, h;
} measure_acc;

static void measure_run(void *ud, TTF_Font *f, int face, const char *run) {
    (void)face;
    measure_acc *a = ud;
    int w = 0, h = 0;
    TTF_SizeUTF8(f, run, &w, &h);
    a->w += w;
}

void font_measure(void *ud, const char *text, int size, int bold, int *w, int *h) {
    font_set *fs = ud;
    measure_acc a = {0, 0};
    for_each_run(fs, text, size, bold, measure_run, &a);
    TTF_Font *p = get_font(fs, bold ? 1 : 0, size);
    *w = a.w;
    *h = p ? TTF_FontHeight(p) : size;
}

typedef struct {
    SDL_Surface *dst;
    int x;
    SDL_Color color;
} render_acc;

static void render_run(void *ud, TTF_Font *f, int face, const char *run) {
    (void)face;
    render_acc *a = ud;
    SDL_Surface *s = TTF_RenderUTF8_Blended(f, run, a->color);
    if (!s) return;
    SDL_SetSurfaceBlendMode(s, SDL_BLENDMODE_NONE);
    /* runs sit side by side, tops aligned; a fallback face taller than the
       primary is cut at the primary's line height */
    SDL_Rect r = {a->x, 0, s->w, s->h};
    SDL_BlitSurface(s, NULL, a->dst, &r);
    a->x += s->w;
    SDL_FreeSurface(s);
}

SDL_Surface *font_render(font_set *fs, const char *text, int size, int bold, rgba color) {
    int w = 0, h = 0;
    font_measure(fs, text, size, bold, &w, &h);
    if (w <= 0 || h <= 0) return NULL;
    SDL_Surface *dst = SDL_CreateRGBSurfaceWithFormat(0, w + 2, h, 32, SDL_PIXELFORMAT_ARGB8888);
    if (!dst) return NULL;
    SDL_FillRect(dst, NULL, SDL_MapRGBA(dst->format, color.r, color.g, color.b, 0));
    render_acc a = {dst, 0, {color.r, color.g, color.b, 255}};
    for_each_run(fs, text, size, bold, render_run, &a);
    return dst;
}

typedef struct {
    font_set *fs;
    font_run_fn fn;
    void *ud;
} runs_acc;

static void runs_run(void *ud, TTF_Font *f, int face, const char *run) {
    runs_acc *a = ud;
    int w = 0, h = 0;
    TTF_SizeUTF8(f, run, &w, &h);
    a->fn(a->ud, a->fs->paths[face], face == 1 && a->fs->synthetic_bold, run, w);
}

void font_runs(font_set *fs, const char *text, int size, int bold, font_run_fn fn, void *ud) {
    runs_acc a = {fs, fn, ud};
    for_each_run(fs, text, size, bold, runs_run, &a);
}

int font_ascent(font_set *fs, int size, int bold) {
    TTF_Font *f = get_font(fs, bold ? 1 : 0, size);
    return f ? TTF_FontAscent(f) : size;
}

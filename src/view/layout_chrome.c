/* layout_chrome.c: the controls' rectangles: the header's buttons and value
 * captions, flowed left to right and wrapping, and the formula strip's runs
 * with real sub- and superscripts, flowed the same way. Where they go in the
 * window is layout.c's; drawing them is panels.c's. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "layout_internal.h"
#include "samples.h"

static int iround(float v) {
    return (int)lroundf(v);
}

#define imax lay_imax
#define imin lay_imin

/* --- header: buttons and value captions, flowed left to right, wrapping ------ */

/* Button labels follow one rule: a button that shows a setting reads "Setting: its
   value now (key)", one that does something reads what it does "(key)". Variant v of
   button b's label (v < 0: the one for the state shown); returns how many variants
   it has, so that its width can be the widest one's and nothing after it moves as
   the value changes. */
static int header_button_variant(const view_state *s, int b, int v, char *out, size_t len) {
    static const char *fixed[BTN_COUNT] = {
        [BTN_H_DOWN] = "\xE2\x88\x92", /* − */
        [BTN_H_UP] = "+",
        [BTN_D_DOWN] = "\xE2\x88\x92",
        [BTN_D_UP] = "+",
        [BTN_SAMPLE_PREV] = "\xE2\x97\x80", /* ◀ */
        [BTN_SAMPLE_NEXT] = "\xE2\x96\xB6", /* ▶ */
        [BTN_TEXT] = "Text (Enter)",
        [BTN_SEED] = "Seed (R)",
        [BTN_ZOOM_OUT] = "A\xE2\x88\x92",
        [BTN_ZOOM_IN] = "A+",
        [BTN_SAVE] = "Save (Ctrl+S)",
        [BTN_HELP] = "Help (F1)",
        [BTN_PAGE_PREV] = "\xE2\x97\x80",
        [BTN_PAGE_NEXT] = "\xE2\x96\xB6",
        [BTN_LAYER_PREV] = "\xE2\x97\x80",
        [BTN_LAYER_NEXT] = "\xE2\x96\xB6",
        [BTN_OVERVIEW] = "All layers (O)",
        [BTN_LESSONS] = "Lessons (G)",
        [BTN_MORE] = "More keys\xE2\x80\xA6",
        [BTN_TRAIN_STEP] = "One step (.)",
        [BTN_TRAIN_BACK] = "Back (Esc)",
    };
    const attn_layer *layer = s->layer;
    const view_train *t = s->train;
    int count = 1, cur = 0;
    switch (b) {
    case BTN_MASK: {
        static const char *val[] = {"none", "causal"};
        count = 2, cur = layer && layer->mask == ATTN_MASK_CAUSAL;
        snprintf(out, len, "Mask: %s (M)", val[v < 0 ? cur : v]);
        break;
    }
    case BTN_SCALE: {
        static const char *val[] = {"\xC3\xB7\xE2\x88\x9A"
                                    "d\xE2\x82\x96",
                                    "off"}; /* ÷√dₖ */
        count = 2, cur = layer && !layer->scaled;
        snprintf(out, len, "Scale: %s (N)", val[v < 0 ? cur : v]);
        break;
    }
    case BTN_PNG_SCALE:
        count = 4, cur = (s->png_scale > 0 && s->png_scale <= 4 ? s->png_scale : 2) - 1;
        snprintf(out, len, "PNG: \xC3\x97%d", (v < 0 ? cur : v) + 1);
        break;
    case BTN_CMAP: {
        count = CMAP_COUNT, cur = s->look.cmap >= 0 && s->look.cmap < CMAP_COUNT ? s->look.cmap : 0;
        const char *name = cmap_name(v < 0 ? cur : v);
        snprintf(out, len, "Colours: %s (C)", name ? name : "?");
        break;
    }
    case BTN_THEME: {
        static const char *val[] = {"light", "dark"};
        count = 2, cur = s->look.theme != 0;
        snprintf(out, len, "Theme: %s (T)", val[v < 0 ? cur : v]);
        break;
    }
    case BTN_TRAIN_GO: {
        static const char *val[] = {"Pause (L)", "Go on (L)"};
        count = 2, cur = t && !t->running;
        snprintf(out, len, "%s", val[v < 0 ? cur : v]);
        break;
    }
    case BTN_TRAIN_SWEEP: { /* what it does: start the sweep, or leave its view */
        static const char *val[] = {"Sweep of h (H)", "Back to training (H)"};
        count = 2, cur = s->sweep != NULL;
        snprintf(out, len, "%s", val[v < 0 ? cur : v]);
        break;
    }
    case BTN_WRITE: { /* what it does, at the pace it writes; the widest pace's width */
        char rate[16];
        const int pace = v >= 2 ? 3000 : s->write_pace_ms > 0 ? s->write_pace_ms : 1000;
        snprintf(rate, sizeof rate, "%.2g", 1000.0 / (double)pace);
        count = 4, cur = s->write == 2;
        snprintf(out, len, (v < 0 ? cur : v % 2) ? "Stop writing, %s/s (W)" : "Write, %s/s (W)",
                 rate);
        break;
    }
    case BTN_TRAIN_SPEED: {
        static const char *val[] = {"full", "slow", "paused", "class pace"};
        count = 4, cur = t ? (!t->running ? 2 : t->rate < 0 ? 3 : t->rate > 0) : 0;
        snprintf(out, len, "Speed: %s (S)", val[v < 0 ? cur : v]);
        break;
    }
    default: snprintf(out, len, "%s", b >= 0 && b < BTN_COUNT && fixed[b] ? fixed[b] : "");
    }
    return count;
}

static void header_button_label(const view_state *s, int b, char *out, size_t len) {
    header_button_variant(s, b, -1, out, len);
}

typedef struct {
    int kind; /* 0 caption, 1 button */
    int id;   /* button id or caption index */
    char text[64];
    int w;
    int group_end;   /* extra gap after this item */
    int min_w;       /* -1: the sample's caption, as wide as the widest one; 0: its text's */
    char widest[64]; /* "": its text's width; else at least as wide as this text */
    int text_w;      /* its text's width as laid out (the widest value's, for a button) */
} hdr_item;

static void model_captions(char model[64], char resplit[64], const view_state *s,
                           const view_overview *ov);
static int add_button(hdr_item *items, int count, const view_state *s, int id, int end);
static int add_caption(hdr_item *items, int count, const view_layout *L, const char *cap, int end);
static int figure_items(hdr_item items[32], const view_layout *L, const view_state *s,
                        const view_overview *ov, const char *model, const char *resplit);
static int window_items(hdr_item items[32], const view_layout *L, const view_state *s,
                        const view_overview *ov, const char *model, const char *resplit);

/* The header's items in reading order: a figure's captions (what it shows), or the
 * window's buttons with their captions between them. Returns how many (at most 32). */
static int header_items(hdr_item items[32], const view_layout *L, const view_state *s) {
    const view_overview *ov = view_overview_ok(s->overview) ? s->overview : NULL;
    char model[64] = "", resplit[64] = "";
    model_captions(model, resplit, s, ov);
    if (s->figure || s->look.present) /* a figure's header: what it shows, no buttons */
        return figure_items(items, L, s, ov, model, resplit);
    return window_items(items, L, s, ov, model, resplit);
}

/* A loaded model's captions (ov; none without one): its name and the layer shown
 * ("gpt2 · layer 3 of 12") in model, and in resplit, when its heads are re-split,
 * how many it was trained with. */
static void model_captions(char model[64], char resplit[64], const view_state *s,
                           const view_overview *ov) {
    const attn_layer *layer = s->layer;
    char name[40] = "model";
    if (ov && ov->name) { /* a long folder name ends in "…", never cut silently */
        const size_t len = strlen(ov->name);
        if (len <= 32) {
            snprintf(name, sizeof name, "%s", ov->name);
        } else {
            size_t keep = 30;
            while (keep > 0 && ((unsigned char)ov->name[keep] & 0xC0) == 0x80) keep--;
            snprintf(name, sizeof name, "%.*s\xE2\x80\xA6", (int)keep, ov->name);
        }
    }
    const char *kind = ov && ov->encoder ? " (encoder)" : "";
    if (ov && ov->layer >= 0 && ov->layer < ov->layers)
        snprintf(model, 64, "%s%s \xC2\xB7 layer %d of %d", name, kind, ov->layer + 1, ov->layers);
    else if (ov)
        snprintf(model, 64, "%s%s \xC2\xB7 %d layers", name, kind, ov->layers);
    if (ov && s->resplit && layer && !view_overview_mode(s))
        snprintf(resplit, 64, "re-split: trained with %d heads, shown as %d", ov->h, layer->h);
    else if (ov && ov->h_kv_shown > 0 && ov->h_kv_shown != ov->h_kv) /* the K/V banner */
        snprintf(resplit, 64, "K/V regrouped: trained with %d, shown with %d", ov->h_kv,
                 ov->h_kv_shown);
}

/* The item at items[count] a button (id), its label as the state words it; end: a
 * group ends after it. Returns count + 1. */
static int add_button(hdr_item *items, int count, const view_state *s, int id, int end) {
    items[count].kind = 1;
    items[count].min_w = 0;
    items[count].widest[0] = '\0';
    items[count].id = id;
    header_button_label(s, id, items[count].text, sizeof items[count].text);
    items[count].group_end = end;
    return count + 1;
}

/* The item at items[count] the caption cap; end: a group ends after it. Returns
 * count + 1. */
static int add_caption(hdr_item *items, int count, const view_layout *L, const char *cap, int end) {
    items[count].kind = 0;
    items[count].min_w = 0;
    items[count].widest[0] = '\0';
    items[count].id = L->hdr_count;
    snprintf(items[count].text, sizeof items[count].text, "%s", cap);
    items[count].group_end = end;
    return count + 1;
}

/* A figure's header (and presentation's): the captions of what it shows. */
static int figure_items(hdr_item items[32], const view_layout *L, const view_state *s,
                        const view_overview *ov, const char *model, const char *resplit) {
    const attn_layer *layer = s->layer;
    char cap[64];
    int count = 0;
    if (model[0])
        snprintf(cap, sizeof cap, "%s \xC2\xB7 h = %d", model, layer ? layer->h : 0);
    else
        snprintf(cap, sizeof cap, "h = %d", layer ? layer->h : 0);
    count = add_caption(items, count, L, cap, 1);
    if (resplit[0]) {
        snprintf(cap, sizeof cap, "%s", resplit);
        count = add_caption(items, count, L, cap, 1);
    }
    snprintf(cap, sizeof cap, "d_model = %d", layer ? layer->d_model : 0);
    count = add_caption(items, count, L, cap, 1);
    if (s->train)
        snprintf(cap, sizeof cap, "task: %s", s->train->task);
    else if (s->sample_index > 0)
        snprintf(cap, sizeof cap, "sample: %s", s->sample_name ? s->sample_name : "");
    else
        snprintf(cap, sizeof cap, "custom text");
    count = add_caption(items, count, L, cap, 1);
    if (!ov) { /* a checkpoint's weights come from no seed */
        snprintf(cap, sizeof cap, "seed %llu", layer ? (unsigned long long)layer->seed : 0ull);
        count = add_caption(items, count, L, cap, 1);
    }
    if (L->panels_page > 0) { /* presenting, the side panels went to a page of their own */
        lay_panels_note(cap, sizeof cap, L->panels_page, s->look.page + 1);
        count = add_caption(items, count, L, cap, 1);
    }
    return count;
}

/* The window's header: the buttons, with the captions they change between them. */
static int window_items(hdr_item items[32], const view_layout *L, const view_state *s,
                        const view_overview *ov, const char *model, const char *resplit) {
    const attn_layer *layer = s->layer;
    char cap[64];
    int count = 0;
    if (model[0] && ov) { /* a loaded model: its layers step with the buttons beside */
        count = add_button(items, count, s, BTN_LAYER_PREV, 0);
        snprintf(cap, sizeof cap, "%s", model);
        count = add_caption(items, count, L, cap, 0);
        count = add_button(items, count, s, BTN_LAYER_NEXT, 1);
        count = add_button(items, count, s, BTN_OVERVIEW, 1);
    } else if (model[0]) {
        snprintf(cap, sizeof cap, "%s", model);
        count = add_caption(items, count, L, cap, 1);
    }
    if (resplit[0]) {
        snprintf(cap, sizeof cap, "%s", resplit);
        count = add_caption(items, count, L, cap, 1);
    }
    count = add_button(items, count, s, BTN_H_DOWN, 0);
    snprintf(cap, sizeof cap, "h = %d", layer ? layer->h : 0);
    count = add_caption(items, count, L, cap, 0);
    /* the buttons after a number stay in place as it changes (up to 2 and 4 digits) */
    snprintf(items[count - 1].widest, sizeof items[count - 1].widest, "h = 00");
    count = add_button(items, count, s, BTN_H_UP, 1);
    if (!ov) count = add_button(items, count, s, BTN_D_DOWN, 0);
    snprintf(cap, sizeof cap, "d_model = %d", layer ? layer->d_model : 0);
    /* a loaded model's d_model is its own: no buttons */
    count = add_caption(items, count, L, cap, ov ? 1 : 0);
    if (!ov) snprintf(items[count - 1].widest, sizeof items[count - 1].widest, "d_model = 0000");
    if (!ov) count = add_button(items, count, s, BTN_D_UP, 1);
    count = add_button(items, count, s, BTN_SAMPLE_PREV, 0);
    if (s->train)
        snprintf(cap, sizeof cap, "task %d/%d: %s", s->sample_index, s->sample_count,
                 s->train->task);
    else if (s->sample_index > 0)
        snprintf(cap, sizeof cap, "sample %d/%d: %s", s->sample_index, s->sample_count,
                 s->sample_name ? s->sample_name : "");
    else
        snprintf(cap, sizeof cap, "custom text");
    count = add_caption(items, count, L, cap, 0);
    if (!s->train) items[count - 1].min_w = -1;
    if (s->train && s->train->task_widest)
        snprintf(items[count - 1].widest, sizeof items[count - 1].widest, "task %d/%d: %s",
                 s->sample_count, s->sample_count, s->train->task_widest);
    count = add_button(items, count, s, BTN_SAMPLE_NEXT, 1);
    if (s->train) { /* training mode: its own buttons; the text, the mask and the
                       scaling are the attention view's */
        count = add_button(items, count, s, BTN_TRAIN_GO, 0);
        count = add_button(items, count, s, BTN_TRAIN_SPEED, 0);
        count = add_button(items, count, s, BTN_TRAIN_STEP, 0);
        count = add_button(items, count, s, BTN_SEED, 0);
        count = add_button(items, count, s, BTN_TRAIN_SWEEP, 0);
        count = add_button(items, count, s, BTN_TRAIN_BACK, 1);
    } else {
        count = add_button(items, count, s, BTN_TEXT, 0);
        if (ov && s->write) count = add_button(items, count, s, BTN_WRITE, 0); /* W */
        if (!ov) { /* a checkpoint's weights, mask and scaling are its own */
            count = add_button(items, count, s, BTN_SEED, 0);
            count = add_button(items, count, s, BTN_MASK, 0);
            count = add_button(items, count, s, BTN_SCALE, 0);
        }
    }
    count = add_button(items, count, s, BTN_CMAP, 0);
    count = add_button(items, count, s, BTN_THEME, 1);
    count = add_button(items, count, s, BTN_ZOOM_OUT, 0);
    count = add_button(items, count, s, BTN_ZOOM_IN, 1);
    count = add_button(items, count, s, BTN_SAVE, 0);
    count = add_button(items, count, s, BTN_PNG_SCALE, 1);
    count = add_button(items, count, s, BTN_LESSONS, 0);
    count = add_button(items, count, s, BTN_HELP, 0);
    /* the panel of the other keys (the state lists them) */
    count = add_button(items, count, s, BTN_MORE, 0);
    return count;
}

/* --- the "More" panel: a button for every key the header has none for -------- */

/* Under the header, right-aligned with its More button: a grid of equal cells as
   wide as the widest label any of them can have, at the controls' size or smaller
   until the grid fits above the status line. */
static void lay_menu(view_layout *L, const view_state *s, view_measure_fn measure, void *ud, int x0,
                     int width) {
    L->menu = (view_rect){0, 0, 0, 0};
    L->menu_font = L->ui_font;
    const int count = imin(s->menu_count, VIEW_MENU_MAX);
    if (!s->menu || s->figure || s->look.present || count <= 0 || !L->buttons[BTN_MORE].present)
        return;
    const view_rect more = L->buttons[BTN_MORE].r;
    const int top = L->header.y + L->header.h + L->ui_pad / 2;
    const int bottom = s->height - 2 * L->ui_line - L->ui_pad; /* above the status line */
    for (int f = L->ui_font; f >= 6; f--) {
        const int pad = imax(2, L->ui_pad * f / imax(1, L->ui_font)), gap = pad / 2 + 1;
        int lw = 0, line = 0;
        measure(ud, "Ag", f, 0, &lw, &line);
        if (line < f) line = f + f / 4;
        int cw = 0;
        for (int i = 0; i < count; i++)
            for (int v = 0; v < 4 && s->menu_items[i].label[v]; v++)
                cw = imax(cw, view_text_width(measure, ud, s->menu_items[i].label[v], f, 0));
        cw += 2 * pad;
        const int title_w = view_text_width(measure, ud, VIEW_MENU_TITLE, f, 1);
        const int avail = width - 2 * pad;
        if (cw > avail || title_w > avail) continue;
        const int cols = imin(count, imax(1, (avail + gap) / (cw + gap)));
        const int rows = (count + cols - 1) / cols, bh = line + pad;
        const int pw = imax(cols * (cw + gap) - gap, title_w) + 2 * pad;
        const int ph = pad + line + pad + rows * (bh + gap) - gap + pad;
        if (top + ph > bottom && f > 6) continue;
        int px = more.x + more.w - pw;
        if (px < x0) px = x0;
        if (px + pw > x0 + width) px = x0 + width - pw;
        L->menu = (view_rect){px, top, pw, ph};
        L->menu_font = f;
        for (int i = 0; i < count; i++) {
            const view_menu_item *it = &s->menu_items[i];
            view_button_box *b = &L->buttons[BTN_MENU + i];
            b->r = (view_rect){px + pad + (i % cols) * (cw + gap),
                               top + pad + line + pad + (i / cols) * (bh + gap), cw, bh};
            b->present = 1;
            b->key = it->key;
            b->mods = it->mods;
            const int shown =
                it->shown >= 0 && it->shown < 4 && it->label[it->shown] ? it->shown : 0;
            snprintf(b->label, sizeof b->label, "%s", it->label[shown] ? it->label[shown] : "");
        }
        return;
    }
}

void lay_header(view_layout *L, const view_state *s, view_measure_fn measure, void *ud, int x0,
                int y0, int width) {
    hdr_item items[32];
    L->hdr_count = 0;
    const int count = header_items(items, L, s);
    const int pad = L->ui_pad, gap = L->ui_pad * 3 / 2;
    const int bh = s->figure || s->look.present ? L->ui_line : L->ui_line + pad; /* button height */
    const int bpad = pad; /* inner horizontal padding */
    int x = x0, y = y0;
    for (int i = 0; i < count; i++) {
        hdr_item *it = &items[i];
        int tw = view_text_width(measure, ud, it->text, L->ui_font, it->kind == 0);
        if (it->min_w < 0) { /* the buttons after it stay where they are as Tab steps
                                through samples of longer and shorter names */
            const int ns = samples_count();
            for (int k = 0; k < ns; k++) {
                char c[64];
                snprintf(c, sizeof c, "sample %d/%d: %s", k + 1, ns, samples_get(k)->name);
                tw = imax(tw, view_text_width(measure, ud, c, L->ui_font, 1));
            }
            tw = imax(tw, view_text_width(measure, ud, "custom text", L->ui_font, 1));
        }
        if (it->widest[0])
            tw = imax(tw, view_text_width(measure, ud, it->widest, L->ui_font, it->kind == 0));
        if (it->kind == 1) { /* as wide as its widest value's label */
            char alt[64];
            const int nv = header_button_variant(s, it->id, 0, alt, sizeof alt);
            for (int v = 0; v < nv; v++) {
                header_button_variant(s, it->id, v, alt, sizeof alt);
                tw = imax(tw, view_text_width(measure, ud, alt, L->ui_font, 0));
            }
        }
        it->w = it->kind ? tw + 2 * bpad : tw + pad;
        if (it->kind == 1 && it->w < bh) it->w = bh; /* square at least */
        it->text_w = tw;
    }
    for (int i = 0; i < count; i++) {
        hdr_item *it = &items[i];
        const int tw = it->text_w;
        int need = it->w; /* a short group (A− A+, − h = 4 +) wraps whole */
        if (i == 0 || items[i - 1].group_end) {
            int gw = 0;
            for (int k = i; k < count; k++) {
                gw += items[k].w + (k > i ? pad / 3 + 1 : 0);
                if (items[k].group_end) break;
            }
            if (gw <= width / 3) need = gw;
        }
        if (x + need > x0 + width && x > x0) {
            x = x0;
            y += bh + pad / 2;
        }
        view_rect r = {x, y, imin(it->w, width), bh};
        if (it->kind) {
            L->buttons[it->id].r = r;
            L->buttons[it->id].present = 1;
            snprintf(L->buttons[it->id].label, sizeof L->buttons[it->id].label, "%s", it->text);
        } else if (L->hdr_count < VIEW_MAX_HDR) {
            view_run *run = &L->hdr_runs[L->hdr_count++];
            run->x = x + pad / 2;
            run->y = y + (bh - L->ui_line) / 2;
            run->size = L->ui_font;
            run->w = tw;
            snprintf(run->text, sizeof run->text, "%s", it->text);
        }
        x += it->w + (it->group_end ? gap + pad / 2 : pad / 3 + 1);
    }
    L->header = (view_rect){x0, y0, width, y + bh - y0};
    lay_menu(L, s, measure, ud, x0, width);
}

/* --- formula strip: runs at three levels (normal, superscript, subscript) ---- */

typedef struct {
    view_layout *L;
    view_measure_fn measure;
    void *ud;
    int x0, width, x, y, line_h;
    int item_start; /* first run of the current item, for wrapping whole items */
} run_flow;

static void run_add(run_flow *f, const char *text, int level) {
    view_layout *L = f->L;
    if (L->run_count >= VIEW_MAX_RUNS) return;
    view_run *r = &L->runs[L->run_count++];
    r->size = level ? iround(L->ui_font * 0.72f) : L->ui_font;
    snprintf(r->text, sizeof r->text, "%s", text);
    r->w = view_text_width(f->measure, f->ud, r->text, r->size, 0);
    r->x = f->x;
    /* scripts at 0.72 of the font, superscripts raised by 0.30 of it, subscripts
       lowered by 0.42; the titles' script runs (labels.c) use the same proportions */
    int base = f->y + (f->line_h - L->ui_line) / 2;
    if (level > 0)
        r->y = base - iround(L->ui_font * 0.30f);
    else if (level < 0)
        r->y = base + iround(L->ui_font * 0.42f);
    else
        r->y = base;
    f->x += r->w;
}

/* Ends an item: wraps it to a new line if it overflowed, then adds a gap. */
static void run_item_end(run_flow *f, int gap) {
    view_layout *L = f->L;
    int first = f->item_start;
    if (f->x > f->x0 + f->width && first < L->run_count && L->runs[first].x > f->x0) {
        int dx = L->runs[first].x - f->x0;
        f->y += f->line_h;
        for (int i = first; i < L->run_count; i++) {
            L->runs[i].x -= dx;
            L->runs[i].y += f->line_h;
        }
        f->x -= dx;
    }
    f->x += gap;
    f->item_start = L->run_count;
}

void lay_formula(view_layout *L, const view_state *s, view_measure_fn measure, void *ud, int x0,
                 int y0, int width) {
    const attn_layer *layer = s->layer;
    int n = layer ? layer->n : 0, d = layer ? layer->d_model : 0, dk = layer ? layer->d_k : 0,
        h = layer ? layer->h : 0;
    run_flow f = {L, measure, ud, x0, width, x0, y0, iround(L->ui_line * 1.45f), 0};
    const int gap = L->ui_font * 2;
    char a[48], b[48];
    const char *in_r = " \xE2\x88\x88 \xE2\x84\x9D"; /* " ∈ ℝ" */
    f.item_start = L->run_count;

    snprintf(a, sizeof a, "%d\xC3\x97%d", n, d);
    run_add(&f, "X", 0), run_add(&f, in_r, 0), run_add(&f, a, 1);
    run_item_end(&f, gap);

    const int h_kv = layer && layer->h_kv > 0 ? layer->h_kv : h;
    if (h_kv == h && dk * h == d) { /* the seed's shapes */
        snprintf(b, sizeof b, "h = %d,  d", h);
        run_add(&f, b, 0), run_add(&f, "k", -1);
        snprintf(b, sizeof b, " = d");
        run_add(&f, b, 0), run_add(&f, "model", -1);
        snprintf(b, sizeof b, "/h = %d", dk);
        run_add(&f, b, 0);
    } else { /* a loaded model's own: K/V heads shared, head_dim read */
        snprintf(b, sizeof b, "h = %d,  h", h);
        run_add(&f, b, 0), run_add(&f, "kv", -1);
        snprintf(b, sizeof b, " = %d,  d", h_kv);
        run_add(&f, b, 0), run_add(&f, "k", -1);
        snprintf(b, sizeof b, " = head_dim = %d", dk);
        run_add(&f, b, 0);
        if (dk * h != d) {
            snprintf(b, sizeof b, " \xE2\x89\xA0 d"); /* ≠ */
            run_add(&f, b, 0), run_add(&f, "model", -1);
            snprintf(b, sizeof b, "/h = %d", h ? d / h : 0);
            run_add(&f, b, 0);
        }
    }
    run_item_end(&f, gap);

    snprintf(a, sizeof a, "%d\xC3\x97%d", n, dk);
    run_add(&f, "Q", 0), run_add(&f, "i", -1), run_add(&f, ", K", 0), run_add(&f, "i", -1);
    run_add(&f, ", V", 0), run_add(&f, "i", -1), run_add(&f, in_r, 0), run_add(&f, a, 1);
    run_item_end(&f, gap);

    run_add(&f, "head", 0), run_add(&f, "i", -1), run_add(&f, " = softmax(Q", 0);
    run_add(&f, "i", -1), run_add(&f, " K", 0), run_add(&f, "i", -1), run_add(&f, "T", 1);
    /* exactly what is in effect: the scaling, the temperature, the mask */
    const float temp = layer && layer->temperature > 0.0f ? layer->temperature : 1.0f;
    const int scaled = !(layer && !layer->scaled), tempered = fabsf(temp - 1.0f) > 1e-6f;
    const int causal = layer && layer->mask == ATTN_MASK_CAUSAL,
              padded = layer && layer->n_real < layer->n;
    if (scaled && tempered)
        snprintf(b, sizeof b, " / (\xE2\x88\x9A%d \xC2\xB7 %g)", dk, (double)temp); /* √ · */
    else if (scaled)
        snprintf(b, sizeof b, " / \xE2\x88\x9A%d", dk);
    else if (tempered)
        snprintf(b, sizeof b, " / %g", (double)temp);
    else
        b[0] = '\0';
    run_add(&f, b, 0);
    run_add(&f, causal || padded ? " + M) V" : ") V", 0);
    run_add(&f, "i", -1);
    if (causal || padded)
        run_add(&f,
                causal && padded ? "  (M: causal + padding)"
                                 : (causal ? "  (M: causal)" : "  (M: padding)"),
                0);
    else if (s->overview && s->overview->encoder) /* an encoder's: both directions */
        run_add(&f, "  (no mask: every token sees every other)", 0);
    run_item_end(&f, gap);

    snprintf(a, sizeof a, "%d\xC3\x97%d", n, h * dk);
    run_add(&f, "Concat", 0), run_add(&f, in_r, 0), run_add(&f, a, 1);
    run_item_end(&f, gap);

    snprintf(a, sizeof a, "%d\xC3\x97%d", h * dk, d);
    run_add(&f, "W", 0), run_add(&f, "O", 1), run_add(&f, in_r, 0), run_add(&f, a, 1);
    run_item_end(&f, gap);

    snprintf(a, sizeof a, "%d\xC3\x97%d", n, d);
    run_add(&f, "MultiHead = Concat W", 0), run_add(&f, "O", 1), run_add(&f, in_r, 0);
    run_add(&f, a, 1);
    run_item_end(&f, 0);

    L->formula = (view_rect){x0, y0, width, f.y + f.line_h - y0};
}

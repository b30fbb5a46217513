/* cli_output.c: the options of where the result goes and how it looks (--help's
 * "Output"): --dump, --export, --bench and the window's files, then the figure's
 * size, panel, page, cells, theme and colours. Whether a panel's head exists is
 * checked once h is known (cli.c, then main with the resolved configuration). */
#include <stdio.h>
#include <string.h>

#include "cli_internal.h"
#include "colormap.h"

static const cli_word contrast_words[] = {{"fixed", 0}, {"row", 1}, {"log", 2}, {NULL, 0}};
static const cli_word theme_words[] = {{"light", 0}, {"dark", 1}, {NULL, 0}};
static const cli_word background_words[] = {{"opaque", 0}, {"transparent", 1}, {NULL, 0}};

/* --export FILE: a name ending in .png, .svg or .pdf (after its last '/'). */
static int export_name_ok(const char *s) {
    const char *dot = strrchr(s, '.');
    const char *slash = strrchr(s, '/');
    if (!dot || (slash && dot < slash)) return 0;
    return strcmp(dot, ".png") == 0 || strcmp(dot, ".svg") == 0 || strcmp(dot, ".pdf") == 0;
}

/* --panel P: all | equation | head:K | steps:K[:S], K from 1 to 4096 (h is checked
 * later). Returns 0, or -1 with o untouched. */
static int parse_panel(const char *s, cli_options *o) {
    long v = 0;
    if (strcmp(s, "all") == 0) {
        o->panel = CLI_PANEL_ALL;
    } else if (strcmp(s, "equation") == 0) {
        o->panel = CLI_PANEL_EQUATION;
    } else if (strcmp(s, "model") == 0) {
        o->panel = CLI_PANEL_MODEL;
    } else if (strcmp(s, "next") == 0) {
        o->panel = CLI_PANEL_NEXT;
    } else if (strncmp(s, "head:", 5) == 0 && cli_parse_int(s + 5, 1, MHA_MAX_D_MODEL, &v) == 0) {
        o->panel = CLI_PANEL_HEAD;
        o->panel_head = (int)v;
    } else if (strcmp(s, "lines") == 0) { /* the head view, every head overlaid */
        o->panel = CLI_PANEL_LINES;
        o->panel_head = 0;
    } else if (strncmp(s, "lines:", 6) == 0 && cli_parse_int(s + 6, 1, MHA_MAX_D_MODEL, &v) == 0) {
        o->panel = CLI_PANEL_LINES;
        o->panel_head = (int)v;
    } else if (strncmp(s, "steps:", 6) == 0) { /* steps:K, or steps:K:S for stage S large */
        char head[16];
        const char *colon = strchr(s + 6, ':');
        const size_t hl = colon ? (size_t)(colon - (s + 6)) : strlen(s + 6);
        long stage = 0;
        if (hl == 0 || hl >= sizeof head) return -1;
        memcpy(head, s + 6, hl);
        head[hl] = '\0';
        if (cli_parse_int(head, 1, MHA_MAX_D_MODEL, &v) != 0 ||
            (colon && cli_parse_int(colon + 1, 1, 10, &stage) != 0)) /* 10: RoPE's only */
            return -1;
        o->panel = CLI_PANEL_STEPS;
        o->panel_head = (int)v;
        o->panel_step = (int)stage;
    } else {
        return -1;
    }
    return 0;
}

/* The options of how the figure looks, in the window and the files alike. */
static int figure_option(cli_options *o, int opt, const char *arg, char *err, size_t errlen) {
    long v = 0;
    switch (opt) {
    case OPT_SIZE:
        if (cli_parse_size(arg, &o->size_w, &o->size_h) != 0)
            return cli_fail(err, errlen,
                            "--size '%s': must be WxH with each side between 200 and 8192", arg);
        return 0;
    case OPT_SCALE:
        if (cli_parse_int(arg, 1, 4, &v) != 0)
            return cli_fail(err, errlen, "--scale '%s': must be a whole number between 1 and 4",
                            arg);
        o->scale = (int)v;
        return 0;
    case OPT_PANEL:
        if (parse_panel(arg, o) != 0)
            return cli_fail(err, errlen,
                            "--panel '%s': must be all, equation, head:K, steps:K, lines, lines:K "
                            "(K from 1 to h), model or next",
                            arg);
        return 0;
    case OPT_PAGE:
        if (cli_parse_int(arg, 1, MHA_MAX_D_MODEL, &v) != 0)
            return cli_fail(err, errlen,
                            "--page '%s': must be a whole number from 1 to the number of pages",
                            arg);
        o->page = (int)v;
        return 0;
    case OPT_PINNED_PAGE:
        if (cli_parse_int(arg, 1, MHA_MAX_D_MODEL, &v) != 0)
            return cli_fail(err, errlen,
                            "--pinned-page '%s': must be a whole number from 1 to the pinned "
                            "view's pages",
                            arg);
        o->pinned_page = (int)v;
        return 0;
    case OPT_VALUES: o->values = 1; return 0;
    case OPT_CONTRAST:
        if (cli_parse_word(arg, contrast_words, &o->contrast) != 0)
            return cli_fail(err, errlen, "--contrast '%s': must be fixed, row or log", arg);
        o->contrast_given = 1;
        return 0;
    case OPT_DIFF: o->diff = 1; return 0;
    case OPT_PRESENT: o->present = 1; return 0;
    case OPT_THEME:
        if (cli_parse_word(arg, theme_words, &o->theme) != 0)
            return cli_fail(err, errlen, "--theme '%s': must be light or dark", arg);
        return 0;
    case OPT_COLORMAP:
        o->colormap = cmap_find(arg);
        if (o->colormap < 0)
            return cli_fail(err, errlen, "--colormap '%s': must be one of %s", arg,
                            cmap_names_list());
        return 0;
    case OPT_BACKGROUND:
        if (cli_parse_word(arg, background_words, &o->transparent) != 0)
            return cli_fail(err, errlen, "--background '%s': must be opaque or transparent", arg);
        return 0;
    default: return CLI_NOT_MINE;
    }
}

int cli_output_option(cli_options *o, cli_flags *f, int opt, const char *arg, char *err,
                      size_t errlen) {
    switch (opt) {
    case OPT_DUMP:
        if (!*arg) return cli_fail(err, errlen, "--dump: needs a folder name");
        if (cli_set_mode(o, CLI_DUMP, "--dump", err, errlen) != 0) return 2;
        o->dump_dir = arg;
        return 0;
    case OPT_EXPORT:
        if (!export_name_ok(arg))
            return cli_fail(err, errlen,
                            "--export '%s': the file name must end in .png, .svg or .pdf", arg);
        if (cli_set_mode(o, CLI_EXPORT, "--export", err, errlen) != 0) return 2;
        o->export_path = arg;
        return 0;
    case OPT_EXPORT_DIR:
        if (!*arg) return cli_fail(err, errlen, "--export-dir: needs a folder name");
        o->export_dir = arg;
        return 0;
    case OPT_FONT:
        if (!*arg) return cli_fail(err, errlen, "--font: needs a file name");
        o->font = arg;
        return 0;
    case OPT_STATE: /* read by main, before any mode starts */
        if (!*arg) return cli_fail(err, errlen, "--state: needs a view file's name");
        o->state_file = arg;
        return 0;
    case OPT_BENCH: f->bench = 1; return 0;
    case OPT_BENCH_JSON: f->bench = o->bench_json = 1; return 0;
    case OPT_BENCH_QUICK: f->bench = o->bench_quick = 1; return 0;
    default: return figure_option(o, opt, arg, err, errlen);
    }
}

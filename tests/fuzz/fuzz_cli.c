/* fuzz_cli.c: the option parser on any argument list (the input's bytes split at
 * NUL into up to 40 arguments). It must return 0 or 2, say why when it refuses
 * (one line, but for what it quotes), keep every value it accepts in range, and
 * give the same result
 * when the same list is parsed again in the same process (getopt fully reset). */
#include <string.h>

#include "cli.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 40

static void check_ranges(const cli_options *o) {
    FUZZ_EXPECT(o->cfg.h >= 0 && o->cfg.h <= MHA_MAX_D_MODEL, "h %d", o->cfg.h);
    FUZZ_EXPECT(o->cfg.d_model >= 0 && o->cfg.d_model <= MHA_MAX_D_MODEL, "d %d", o->cfg.d_model);
    FUZZ_EXPECT((o->size_w == 0 && o->size_h == 0) || (o->size_w >= 200 && o->size_w <= 8192 &&
                                                       o->size_h >= 200 && o->size_h <= 8192),
                "size %dx%d", o->size_w, o->size_h);
    FUZZ_EXPECT(o->scale >= 0 && o->scale <= 4, "scale %d", o->scale);
    FUZZ_EXPECT(o->cfg.pad >= 0 && o->cfg.pad <= MHA_MAX_N, "pad %d", o->cfg.pad);
    FUZZ_EXPECT(o->cfg.temperature == 0.0f || (o->cfg.temperature >= (float)MHA_MIN_TEMPERATURE &&
                                               o->cfg.temperature <= (float)MHA_MAX_TEMPERATURE),
                "temperature %g", (double)o->cfg.temperature);
    FUZZ_EXPECT(o->sample >= 0, "sample %d", o->sample);
    FUZZ_EXPECT(o->theme >= -1 && o->theme <= 1, "theme %d", o->theme);
    FUZZ_EXPECT(o->mode != CLI_EXPORT || o->export_path, "export without a path");
    FUZZ_EXPECT(o->mode != CLI_DUMP || (o->dump_dir && o->dump_dir[0]), "dump without a folder");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 4096) return 0;
    char *buf = malloc(size + 1);
    FUZZ_EXPECT(buf != NULL, "malloc");
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "mhaviz";
    for (size_t i = 0; i <= size && argc <= MAX_ARGS;) {
        argv[argc++] = buf + i;
        i += strlen(buf + i) + 1;
    }
    argv[argc] = NULL;
    /* getopt may permute argv: parse copies of the same list */
    char *a1[MAX_ARGS + 2], *a2[MAX_ARGS + 2];
    memcpy(a1, argv, sizeof argv);
    memcpy(a2, argv, sizeof argv);
    cli_options o1, o2;
    char e1[512] = "", e2[512] = "";
    int r1 = cli_parse(&o1, argc, a1, e1, sizeof e1);
    int r2 = cli_parse(&o2, argc, a2, e2, sizeof e2);
    FUZZ_EXPECT(r1 == 0 || r1 == 2, "rc %d", r1);
    FUZZ_EXPECT(r1 == r2 && strcmp(e1, e2) == 0, "second parse: %d '%s', first %d '%s'", r2, e2, r1,
                e1);
    if (r1 == 2) {
        /* one line of its own: a control character in it must come from an argument
           it quotes (main prints those as '?'). MHAVIZ_FUZZ_STRICT=1: none at all, as
           cli.h promises (tests/fuzz/crashes/) */
        static int strict = -1;
        if (strict < 0) strict = getenv("MHAVIZ_FUZZ_STRICT") != NULL;
        FUZZ_EXPECT(e1[0] && (!strict || !strpbrk(e1, "\n\r")), "message '%s'", e1);
        for (const char *c = e1; *c; c++)
            if ((unsigned char)*c < 0x20) {
                int quoted = 0;
                for (int i = 1; i < argc && !quoted; i++) quoted = strchr(argv[i], *c) != NULL;
                FUZZ_EXPECT(quoted, "control character %#x in '%s' not from an argument", *c, e1);
            }
    } else {
        FUZZ_EXPECT(memcmp(&o1, &o2, sizeof o1) == 0, "the two parses differ");
        check_ranges(&o1);
    }
    free(buf);
    return 0;
}

#define _POSIX_C_SOURCE 200809L
/* test_state_eos.c: W on a loaded model stops at the model's own end token
 * (model_eos.h, as --generate), marks it, does not write it, and says so.
 *
 * The checkpoint comes from tests/state_model_check.py (gpt2_gen.py, 3 layers x 4
 * heads, n_embd 32; its end token, the last id, is one this writing never
 * reaches on this text) in MHAVIZ_TEST_MODEL, and a scratch folder in
 * MHAVIZ_TEST_TMP. First W writes 8 tokens (sample-temperature 1, sample-seed 7:
 * the same ones every time) and stops at write-length; E is the last of them, from the second on,
 * not written before it (its k-th, 1-based). A folder of the same files with a
 * generation_config.json naming E (which Hugging Face's generate() reads first) is
 * opened, and W again: it writes the first k - 1 of the same tokens, then stops
 * with E marked and not written ("the model wrote its end of text"); W again
 * writes nothing and says so again. Without the stop, E would be written (the
 * same 8 tokens: the first run shows it). Keys are pressed through
 * app_key_action, as the window does; without the folders the test is skipped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "check.h"
#include "gpt_internal.h"
#include "state.h"
#include "state_fixture.h"
#include "state_internal.h"

#define PROMPT "The quick brown fox"
#define WRITTEN 8

static app_state *make_state(const char *path) {
    cli_options o = fx_options();
    o.mode = CLI_EXPORT;
    o.text = PROMPT;
    o.model_path = path;
    app_state *s = fx_app_state(&o, 4, 64, NULL, NULL, 0);
    CHECK_TRUE("a model is loaded", app_gpt_active(s));
    /* sampled with one seed: the same tokens every time (greedy writing repeats one
       token on this random model) */
    s->write.temperature = 1.0f;
    s->write.seed = 7;
    s->write.length = WRITTEN;
    s->write.pace_ms = 100;
    return s;
}

static int press(app_state *s, int key, int mods) {
    app_action a = app_key_action(s, key, mods);
    return app_apply(s, &a);
}

static int has(const char *hay, const char *needle) {
    return hay && strstr(hay, needle) != NULL;
}

/* W, then the clock until it stops by itself. */
static void write_until_stopped(app_state *s, double *now) {
    app_tick(s, *now);
    press(s, 'w', 0);
    for (int ticks = 0; app_write_on(s) && ticks < 1000; ticks++) {
        *now += 50.0;
        app_tick(s, *now);
    }
    CHECK_INT("it stops by itself", 0, app_write_on(s));
}

/* dir/name a symbolic link to from/name. */
static void link_file(const char *from, const char *dir, const char *name) {
    char src[8300], dst[8300];
    snprintf(src, sizeof src, "%s/%s", from, name);
    snprintf(dst, sizeof dst, "%s/%s", dir, name);
    unlink(dst);
    if (symlink(src, dst) != 0) fail_msg("symlink %s", dst);
}

static void test_write_eos(void **st) {
    (void)st;
    const char *dir = getenv("MHAVIZ_TEST_MODEL"), *tmp = getenv("MHAVIZ_TEST_TMP");
    if (!dir || !*dir || !tmp || !*tmp) skip();
    double now = 1000.0;
    app_state *s = make_state(dir);
    write_until_stopped(s, &now);
    CHECK_INT("W: write-length tokens, no end token among them", WRITTEN, app_gpt_written(s));
    CHECK_TRUE("the status says write-length", has(s->status, "write-length"));
    int ids[WRITTEN], k = 0;
    memcpy(ids, s->gpt->more, sizeof ids);
    for (int i = WRITTEN - 1; i >= 1 && !k; i--) { /* the latest: the most written before */
        int seen = 0;
        for (int j = 0; j < i; j++) seen |= ids[j] == ids[i];
        if (!seen) k = i + 1;
    }
    if (!k) fail_msg("the writing repeats its first token: no end token to pick");
    print_message("the end token: token %d of the %d written\n", k, WRITTEN);
    const int end = ids[k - 1];
    app_state_destroy(s);

    /* the same files, with a generation_config.json that names E */
    char eos_dir[4096], path[4200];
    snprintf(eos_dir, sizeof eos_dir, "%s/eos", tmp);
    mkdir(eos_dir, 0755);
    link_file(dir, eos_dir, "config.json");
    link_file(dir, eos_dir, "model.safetensors");
    link_file(dir, eos_dir, "vocab.json");
    link_file(dir, eos_dir, "merges.txt");
    snprintf(path, sizeof path, "%s/generation_config.json", eos_dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"eos_token_id\": %d}\n", end);
    fclose(f);

    s = make_state(eos_dir);
    write_until_stopped(s, &now);
    CHECK_INT("W stops before the end token", k - 1, app_gpt_written(s));
    for (int i = 0; i < k - 1; i++) CHECK_INT("the same tokens before it", ids[i], s->gpt->more[i]);
    CHECK_INT("the end token marked, not written", end, app_gpt_marked(s));
    CHECK_TRUE("the status says so", has(s->status, "the model wrote its end of text"));
    s->status[0] = '\0';
    write_until_stopped(s, &now);
    CHECK_INT("W again: nothing written", k - 1, app_gpt_written(s));
    CHECK_TRUE("and it says so again", has(s->status, "end of text"));
    app_state_destroy(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_eos),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

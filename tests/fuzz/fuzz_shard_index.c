/* fuzz_shard_index.c: shard_index_parse (model.safetensors.index.json) on any bytes.
 * A refusal must be 1 or 2 with one line of message and an empty index; an accepted
 * index must have 1..SHARD_MAX shards, each a plain .safetensors name beside the
 * index (no '/', not starting with '.') named once, and every tensor mapped to one of
 * them. */
#include <string.h>

#include "fuzz.h"
#include "shard_index.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    shard_index x;
    char err[512] = "";
    const int rc = shard_index_parse(&x, (const char *)data, size, "index.json", err, sizeof err);
    if (rc != 0) {
        FUZZ_EXPECT((rc == 1 || rc == 2) && x.n == 0 && x.n_shards == 0 && !x.shard, "rc %d", rc);
        FUZZ_EXPECT(err[0] && !strchr(err, '\n'), "refusal: '%s'", err);
        return 0;
    }
    FUZZ_EXPECT(x.n >= 1 && x.n_shards >= 1 && x.n_shards <= SHARD_MAX && x.n_shards <= x.n,
                "n %d shards %d", x.n, x.n_shards);
    for (int i = 0; i < x.n_shards; i++) {
        const char *s = x.shard[i];
        const size_t len = strlen(s);
        FUZZ_EXPECT(len > 12 && s[0] != '.' && !strchr(s, '/') &&
                        strcmp(s + len - 12, ".safetensors") == 0,
                    "shard '%s'", s);
        for (int j = 0; j < i; j++) FUZZ_EXPECT(strcmp(x.shard[j], s) != 0, "'%s' twice", s);
    }
    for (int k = 0; k < x.n; k++)
        FUZZ_EXPECT(x.tensor[k] && x.of[k] >= 0 && x.of[k] < x.n_shards, "tensor %d of %d", k,
                    x.of[k]);
    shard_index_free(&x);
    return 0;
}

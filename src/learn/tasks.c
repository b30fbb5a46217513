/* tasks.c: the toy tasks the learner trains on, each a generator of (tokens,
 * targets) from a random stream, with its symbols for token labels. A hash of the
 * tokens puts a quarter of all examples in the held-out set and the rest in
 * training, so held-out accuracy never measures memorised examples. */
#include <string.h>

#include "learn.h"
#include "rng.h"

static const char *const LETTERS[] = {"A", "B", "C", "D", "E", "F", "G", "H",
                                      "I", "J", "K", "L", "M", "N", "O", "P"};
static const char *const DIGITS[] = {"0", "1", "2"};
/* pair's classes: (token at 0, token at i-1), class 5 a + b */
static const char *const PAIRS[] = {"A,A", "A,B", "A,C", "A,D", "A,E", "B,A", "B,B", "B,C", "B,D",
                                    "B,E", "C,A", "C,B", "C,C", "C,D", "C,E", "D,A", "D,B", "D,C",
                                    "D,D", "D,E", "E,A", "E,B", "E,C", "E,D", "E,E"};

#define SORT_DIGITS 6
#define IND_T 24
#define IND_PREFIX_MAX 4
#define IND_BLOCK_MIN 8
#define IND_BLOCK_MAX 10

static const learn_task_info TASKS[LEARN_TASK_COUNT] = {
    {"prev", "target at i is the token at i-1: one head attends to i-1", 10, 10, 12, 1, 500,
     LETTERS, LETTERS},
    {"first", "target at i is the token at 0: one head attends to token 0", 10, 10, 12, 1, 500,
     LETTERS, LETTERS},
    {"pair",
     "target at i is (token at 0, token at i-1), one of 25: two heads split the job, "
     "one head must compromise",
     5, 25, 12, 1, 500, LETTERS, PAIRS},
    {"sort", "6 digits from {0,1,2}, then the same sorted: heads count and copy", 3, 3,
     2 * SORT_DIGITS - 1, 1, 1000, DIGITS, DIGITS},
    {"induction",
     "a block of 8-10 distinct symbols repeated: in the second copy, predict the token after "
     "the previous occurrence (needs 2 layers)",
     16, 16, IND_T, 2, 3000, LETTERS, LETTERS},
};

const learn_task_info *learn_task(learn_task_id id) {
    if ((int)id < 0 || (int)id >= LEARN_TASK_COUNT) return NULL;
    return &TASKS[id];
}

int learn_task_find(const char *name) {
    for (int i = 0; i < LEARN_TASK_COUNT; i++)
        if (name && strcmp(name, TASKS[i].name) == 0) return i;
    return -1;
}

int learn_task_is_heldout(const int *tokens, int seq_len) {
    uint64_t h = 0xCBF29CE484222325ull; /* FNV-1a over the token ids, then mixed */
    for (int i = 0; i < seq_len; i++) {
        h ^= (uint64_t)(unsigned)tokens[i];
        h *= 0x100000001B3ull;
    }
    return (rng_next(&h) & 3u) == 0;
}

/* one example of each task, without regard to the held-out split */
static void sample_prev_first(int *tok, int *tgt, int T, int vocab, int first, uint64_t *rng) {
    for (int i = 0; i < T; i++) tok[i] = rng_below(rng, vocab);
    tgt[0] = -1;
    for (int i = 1; i < T; i++) tgt[i] = first ? tok[0] : tok[i - 1];
}

static void sample_pair(int *tok, int *tgt, int T, uint64_t *rng) {
    for (int i = 0; i < T; i++) tok[i] = rng_below(rng, 5);
    tgt[0] = -1;
    for (int i = 1; i < T; i++) tgt[i] = 5 * tok[0] + tok[i - 1];
}

/* minGPT's sort: seq = 6 digits, then them sorted (12); the input is seq[0..10]
 * and the target at i (5..10) is seq[i+1], the next sorted digit */
static void sample_sort(int *tok, int *tgt, uint64_t *rng) {
    int seq[2 * SORT_DIGITS], count[3] = {0, 0, 0};
    for (int i = 0; i < SORT_DIGITS; i++) {
        seq[i] = rng_below(rng, 3);
        count[seq[i]]++;
    }
    int p = SORT_DIGITS;
    for (int dgt = 0; dgt < 3; dgt++)
        for (int c = 0; c < count[dgt]; c++) seq[p++] = dgt;
    for (int i = 0; i < 2 * SORT_DIGITS - 1; i++) {
        tok[i] = seq[i];
        tgt[i] = i >= SORT_DIGITS - 1 ? seq[i + 1] : -1;
    }
}

/* prefix of 1..4 random symbols, a block of 8..10 distinct symbols, the block
 * again, random filler to T. Target at a second-copy position: the token after
 * the previous occurrence of the current token (which is in the first copy). */
static void sample_induction(int *tok, int *tgt, int vocab, uint64_t *rng) {
    int p = 1 + rng_below(rng, IND_PREFIX_MAX);
    int b = IND_BLOCK_MIN + rng_below(rng, IND_BLOCK_MAX - IND_BLOCK_MIN + 1);
    int perm[16];
    for (int i = 0; i < vocab; i++) perm[i] = i;
    for (int i = 0; i < b; i++) { /* partial Fisher-Yates: b distinct symbols */
        int j = i + rng_below(rng, vocab - i);
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int i = 0; i < IND_T; i++) {
        tok[i] = rng_below(rng, vocab); /* prefix and filler */
        tgt[i] = -1;
    }
    for (int k = 0; k < b; k++) tok[p + k] = tok[p + b + k] = perm[k];
    for (int k = 0; k < b; k++) tgt[p + b + k] = tok[p + k + 1];
}

void learn_task_sample(int *tokens, int *targets, learn_task_id id, int heldout, uint64_t *rng) {
    const learn_task_info *t = learn_task(id);
    for (;;) {
        switch (id) {
        case LEARN_PREV: sample_prev_first(tokens, targets, t->seq_len, t->vocab, 0, rng); break;
        case LEARN_FIRST: sample_prev_first(tokens, targets, t->seq_len, t->vocab, 1, rng); break;
        case LEARN_PAIR: sample_pair(tokens, targets, t->seq_len, rng); break;
        case LEARN_SORT: sample_sort(tokens, targets, rng); break;
        default: sample_induction(tokens, targets, t->vocab, rng); break;
        }
        if (learn_task_is_heldout(tokens, t->seq_len) == (heldout != 0)) return;
    }
}

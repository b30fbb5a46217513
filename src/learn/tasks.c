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

/* cards' tokens: card 4 key + value reads "key=value", question 128 + key reads "key?" */
static const char *const CARD_SYMBOLS[] = {
    "0=0",  "0=1",  "0=2",  "0=3",  "1=0",  "1=1",  "1=2",  "1=3",  "2=0",  "2=1",  "2=2",  "2=3",
    "3=0",  "3=1",  "3=2",  "3=3",  "4=0",  "4=1",  "4=2",  "4=3",  "5=0",  "5=1",  "5=2",  "5=3",
    "6=0",  "6=1",  "6=2",  "6=3",  "7=0",  "7=1",  "7=2",  "7=3",  "8=0",  "8=1",  "8=2",  "8=3",
    "9=0",  "9=1",  "9=2",  "9=3",  "10=0", "10=1", "10=2", "10=3", "11=0", "11=1", "11=2", "11=3",
    "12=0", "12=1", "12=2", "12=3", "13=0", "13=1", "13=2", "13=3", "14=0", "14=1", "14=2", "14=3",
    "15=0", "15=1", "15=2", "15=3", "16=0", "16=1", "16=2", "16=3", "17=0", "17=1", "17=2", "17=3",
    "18=0", "18=1", "18=2", "18=3", "19=0", "19=1", "19=2", "19=3", "20=0", "20=1", "20=2", "20=3",
    "21=0", "21=1", "21=2", "21=3", "22=0", "22=1", "22=2", "22=3", "23=0", "23=1", "23=2", "23=3",
    "24=0", "24=1", "24=2", "24=3", "25=0", "25=1", "25=2", "25=3", "26=0", "26=1", "26=2", "26=3",
    "27=0", "27=1", "27=2", "27=3", "28=0", "28=1", "28=2", "28=3", "29=0", "29=1", "29=2", "29=3",
    "30=0", "30=1", "30=2", "30=3", "31=0", "31=1", "31=2", "31=3", "0?",   "1?",   "2?",   "3?",
    "4?",   "5?",   "6?",   "7?",   "8?",   "9?",   "10?",  "11?",  "12?",  "13?",  "14?",  "15?",
    "16?",  "17?",  "18?",  "19?",  "20?",  "21?",  "22?",  "23?",  "24?",  "25?",  "26?",  "27?",
    "28?",  "29?",  "30?",  "31?"};
/* cards' classes: 4 (value of the asked card) + (value of the card at 0) */
static const char *const CARD_CLASSES[] = {"0,0", "0,1", "0,2", "0,3", "1,0", "1,1", "1,2", "1,3",
                                           "2,0", "2,1", "2,2", "2,3", "3,0", "3,1", "3,2", "3,3"};

#define SORT_DIGITS 6
#define IND_T 24
#define IND_PREFIX_MAX 4
#define IND_BLOCK_MIN 8
#define IND_BLOCK_MAX 10
#define CARD_KEYS 32
#define CARD_VALUES 4
#define CARD_SHOWN 16 /* cards dealt, keys distinct */
#define CARD_ASKED 8  /* questions after them */
/* cards starts its matrices N(0, 0.1), not 0.02: from 0.02 the content match (a
   question's key against 16 cards) leaves its plateau late, and 2 of seeds 1-40 at
   h = 4 were still on it at step 1000 (28 and 58 %); from 0.1, none (README) */
#define CARD_INIT_STD 0.1f
/* cards trains at d_model 16 unless asked otherwise: there its sweep of h shows both
   ends losing (seeds 1-5: h = 1 29.6 %, h = 4 100 %, h = 16 62.3 %), where at d_model 32
   h = 2 to 16 all reached 98.7-100 % and only h = 32 lost, 10 points (README, "More
   heads are smaller heads") */
#define CARD_D_MODEL 16

static const learn_task_info TASKS[LEARN_TASK_COUNT] = {
    {"prev", "target at i is the token at i-1: one head attends to i-1", 10, 10, 12, 1, 500,
     LETTERS, LETTERS, 0.0f, 0},
    {"first", "target at i is the token at 0: one head attends to token 0", 10, 10, 12, 1, 500,
     LETTERS, LETTERS, 0.0f, 0},
    {"pair",
     "target at i is (token at 0, token at i-1), one of 25: two heads can split the job, "
     "one head also solves it",
     5, 25, 12, 1, 500, LETTERS, PAIRS, 0.0f, 0},
    {"sort", "6 digits from {0,1,2}, then the same sorted: heads count and copy", 3, 3,
     2 * SORT_DIGITS - 1, 1, 1000, DIGITS, DIGITS, 0.0f, 0},
    {"induction",
     "a block of 8-10 distinct symbols repeated: in the second copy, predict the token after "
     "the previous occurrence (needs 2 layers)",
     16, 16, IND_T, 2, 3000, LETTERS, LETTERS, 0.0f, 0},
    {"cards", "16 cards key=value, 8 questions key?: asked card's value, card 0's",
     CARD_KEYS *CARD_VALUES + CARD_KEYS, CARD_VALUES *CARD_VALUES, CARD_SHOWN + CARD_ASKED, 1, 1000,
     CARD_SYMBOLS, CARD_CLASSES, CARD_INIT_STD, CARD_D_MODEL},
};

const learn_task_info *learn_task(learn_task_id id) {
    if ((int)id < 0 || (int)id >= LEARN_TASK_COUNT) return NULL;
    return &TASKS[id];
}

int learn_task_d_model(learn_task_id id) {
    const learn_task_info *t = learn_task(id);
    return t && t->default_d_model > 0 ? t->default_d_model : 32;
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

/* associative recall with a positional relation: 16 cards (token 4 key + value)
 * with distinct keys (a partial Fisher-Yates over the 32) and uniform values, then
 * 8 questions (token 128 + key), each the key of one of the 16 cards, drawn
 * uniformly with repeats. The target at a question: 4 (value of the asked card) +
 * (value of the card at position 0); none at the cards. */
static void sample_cards(int *tok, int *tgt, uint64_t *rng) {
    int keys[CARD_KEYS], vals[CARD_SHOWN];
    for (int i = 0; i < CARD_KEYS; i++) keys[i] = i;
    for (int i = 0; i < CARD_SHOWN; i++) {
        int j = i + rng_below(rng, CARD_KEYS - i);
        int t = keys[i];
        keys[i] = keys[j];
        keys[j] = t;
        vals[i] = rng_below(rng, CARD_VALUES);
        tok[i] = CARD_VALUES * keys[i] + vals[i];
        tgt[i] = -1;
    }
    for (int q = 0; q < CARD_ASKED; q++) {
        int c = rng_below(rng, CARD_SHOWN);
        tok[CARD_SHOWN + q] = CARD_KEYS * CARD_VALUES + keys[c];
        tgt[CARD_SHOWN + q] = CARD_VALUES * vals[c] + vals[0];
    }
}

void learn_task_sample(int *tokens, int *targets, learn_task_id id, int heldout, uint64_t *rng) {
    const learn_task_info *t = learn_task(id);
    for (;;) {
        switch (id) {
        case LEARN_PREV: sample_prev_first(tokens, targets, t->seq_len, t->vocab, 0, rng); break;
        case LEARN_FIRST: sample_prev_first(tokens, targets, t->seq_len, t->vocab, 1, rng); break;
        case LEARN_PAIR: sample_pair(tokens, targets, t->seq_len, rng); break;
        case LEARN_SORT: sample_sort(tokens, targets, rng); break;
        case LEARN_INDUCTION: sample_induction(tokens, targets, t->vocab, rng); break;
        default: sample_cards(tokens, targets, rng); break;
        }
        if (learn_task_is_heldout(tokens, t->seq_len) == (heldout != 0)) return;
    }
}

/* patterns.c: designed heads (--weights patterns). Builds W_i^Q and W_i^K so that
 * head i shows a named behaviour, and the codes in X those weights read. The
 * forward pass is the ordinary one; only the weights and X differ. The README's
 * "Designed heads" section explains the construction for students.
 *
 * X holds, in this order, only the blocks some head needs (the other dimensions
 * keep the usual embedding + positional encoding, which designed heads ignore):
 *   pos   8 dims  position code: cos, sin of theta_f * p for 4 frequencies theta_f
 *   cst   1 dim   the constant 1
 *   start 1 dim   1 at position 0, else 0
 *   word  8 dims  word code: the same cos/sin code of the word's rank v among the
 *                 distinct tokens of the text (in order of first appearance)
 * With K(D) = (1/4) sum_f cos(theta_f D), K(0) = 1 and, for 1 <= |D| <= 512,
 * -0.906 <= K(D) <= 0.766: two different positions (or words) never look alike.
 * The scores below are after the 1/sqrt(d_k) scaling at temperature 1 (each Q
 * carries a factor sqrt(d_k) for that). */
#include <math.h>
#include <string.h>

#include "mha.h"

#define CODE_F 4        /* frequencies in a code; a code is 2 * CODE_F dims */
#define CODE_DIMS 8     /* 2 * CODE_F */
#define POS_PEAK 32     /* previous/next/self: score at the target (others <= 32 * 0.766) */
#define FIRST_PEAK 16   /* first: score of token 0 (every other key scores 0) */
#define WORD_GAIN 160   /* same-word: 160 * K(v_p - v_j) for the word match ... */
#define SELF_PENALTY 16 /* ... minus 16 * K(p - j), so another occurrence beats itself */

/* theta_f = 2.432 / 6.166^f: periods of about 2.6, 16, 98 and 606 positions. Chosen
 * (by a search over geometric series) to keep K(D) <= 0.766 for 1 <= |D| <= 512. */
static double code_theta(int f) {
    return 2.432 / pow(6.166, (double)f);
}

static const mha_pattern CYCLE[MHA_PATTERN_CYCLE] = {
    MHA_PATTERN_PREVIOUS, MHA_PATTERN_NEXT,      MHA_PATTERN_FIRST,
    MHA_PATTERN_SELF,     MHA_PATTERN_SAME_WORD, MHA_PATTERN_BROAD,
};

int mha_pattern_min_dk(mha_pattern p) {
    switch (p) {
    case MHA_PATTERN_PREVIOUS:
    case MHA_PATTERN_NEXT:
    case MHA_PATTERN_SELF: return CODE_DIMS;          /* the position code */
    case MHA_PATTERN_SAME_WORD: return 2 * CODE_DIMS; /* word code + position code */
    case MHA_PATTERN_FIRST:
    case MHA_PATTERN_BROAD: return 1;
    default: return 0;
    }
}

mha_pattern mha_head_pattern(const mha_config *cfg, int head) {
    if (cfg->weights != MHA_WEIGHTS_PATTERNS) return MHA_PATTERN_RANDOM;
    MHA_EXPECT(cfg->h >= 1 && head >= 0 && head < cfg->h);
    mha_pattern p = CYCLE[head % MHA_PATTERN_CYCLE];
    return cfg->d_model / cfg->h >= mha_pattern_min_dk(p) ? p : MHA_PATTERN_NONE;
}

const char *mha_pattern_name(mha_pattern p) {
    switch (p) {
    case MHA_PATTERN_RANDOM: return "random";
    case MHA_PATTERN_PREVIOUS: return "previous";
    case MHA_PATTERN_NEXT: return "next";
    case MHA_PATTERN_FIRST: return "first";
    case MHA_PATTERN_SELF: return "self";
    case MHA_PATTERN_SAME_WORD: return "same-word";
    case MHA_PATTERN_BROAD: return "broad";
    case MHA_PATTERN_NONE: return "none (d_k too small)";
    }
    return "?";
}

const char *mha_head_pattern_name(const mha_model *m, int head) {
    return mha_pattern_name(mha_head_pattern(&m->cfg, head));
}

/* Where the blocks of X are for cfg; -1 when no head reads that block. */
typedef struct {
    int pos, cst, start, word;
} x_blocks;

static x_blocks blocks_for(const mha_config *cfg) {
    int need_pos = 0, need_first = 0, need_word = 0;
    for (int i = 0; i < cfg->h && i < MHA_PATTERN_CYCLE; i++) {
        mha_pattern p = mha_head_pattern(cfg, i);
        need_pos |= p == MHA_PATTERN_PREVIOUS || p == MHA_PATTERN_NEXT || p == MHA_PATTERN_SELF ||
                    p == MHA_PATTERN_SAME_WORD;
        need_first |= p == MHA_PATTERN_FIRST;
        need_word |= p == MHA_PATTERN_SAME_WORD;
    }
    x_blocks b = {-1, -1, -1, -1};
    int off = 0;
    if (need_pos) b.pos = off, off += CODE_DIMS;
    if (need_first) b.cst = off, b.start = off + 1, off += 2;
    if (need_word) b.word = off, off += CODE_DIMS;
    /* always fits: pos needs d_k >= 8; first comes with h >= 3; word with h >= 5 and
       d_k >= 16, so off <= 18 <= 5 * 16 <= d_model */
    MHA_EXPECT(off <= cfg->d_model);
    return b;
}

/* e (CODE_DIMS) = cos, sin of theta_f * t */
static void code_write(float *e, int t) {
    for (int f = 0; f < CODE_F; f++) {
        double a = code_theta(f) * (double)t;
        e[2 * f] = (float)cos(a);
        e[2 * f + 1] = (float)sin(a);
    }
}

/* W (d, d): the CODE_DIMS rows from `row` times the CODE_DIMS columns from `col`
 * become gain * (a rotation by shift steps of each frequency's pair). With a code
 * c(t) in X's rows, x W then holds gain * c(t + shift) in those columns. */
static void put_rotation(float *w, int d, int row, int col, double shift, double gain) {
    for (int f = 0; f < CODE_F; f++) {
        double a = code_theta(f) * shift;
        float c = (float)(gain * cos(a)), s = (float)(gain * sin(a));
        float *r0 = w + (size_t)(row + 2 * f) * d + col + 2 * f;
        float *r1 = r0 + d;
        /* [cos t, sin t] [[c, s], [-s, c]] = gain [cos(t + a), sin(t + a)] */
        r0[0] = c, r0[1] = s;
        r1[0] = -s, r1[1] = c;
    }
}

static void zero_columns(float *w, int d, int col, int count) {
    for (int r = 0; r < d; r++) memset(w + (size_t)r * d + col, 0, (size_t)count * sizeof(float));
}

void mha_patterns_weights(float *w_q, float *w_k, const mha_config *cfg) {
    const int d = cfg->d_model, dk = d / cfg->h;
    const x_blocks b = blocks_for(cfg);
    const double root = sqrt((double)dk); /* undoes the 1/sqrt(d_k) scaling */
    for (int i = 0; i < cfg->h; i++) {
        const mha_pattern p = mha_head_pattern(cfg, i);
        const int col = i * dk;
        if (p == MHA_PATTERN_NONE || p == MHA_PATTERN_RANDOM) continue; /* stays random */
        zero_columns(w_q, d, col, dk);
        zero_columns(w_k, d, col, dk);
        switch (p) {
        case MHA_PATTERN_PREVIOUS:
        case MHA_PATTERN_NEXT:
        case MHA_PATTERN_SELF: {
            /* Q_i(p) = g c(p + shift), K_i(j) = c(j): score g * 4 K(p + shift - j) */
            double shift = p == MHA_PATTERN_PREVIOUS ? -1.0 : p == MHA_PATTERN_NEXT ? 1.0 : 0.0;
            put_rotation(w_q, d, b.pos, col, shift, POS_PEAK / (double)CODE_F * root);
            put_rotation(w_k, d, b.pos, col, 0.0, 1.0);
            break;
        }
        case MHA_PATTERN_FIRST:
            /* Q_i(p) = FIRST_PEAK (from the constant), K_i(j) = 1 only at j = 0 */
            w_q[(size_t)b.cst * d + col] = (float)(FIRST_PEAK * root);
            w_k[(size_t)b.start * d + col] = 1.0f;
            break;
        case MHA_PATTERN_SAME_WORD:
            /* first 8 columns: word match, 160 K(v_p - v_j); next 8: -16 K(p - j) */
            put_rotation(w_q, d, b.word, col, 0.0, WORD_GAIN / (double)CODE_F * root);
            put_rotation(w_k, d, b.word, col, 0.0, 1.0);
            put_rotation(w_q, d, b.pos, col + CODE_DIMS, 0.0,
                         -SELF_PENALTY / (double)CODE_F * root);
            put_rotation(w_k, d, b.pos, col + CODE_DIMS, 0.0, 1.0);
            break;
        case MHA_PATTERN_BROAD: /* W_i^Q = 0: every score 0, uniform over visible keys; */
            break;              /* W_i^K is zeroed too, so Q_i and K_i are both 0 */
        default: break;
        }
    }
}

static const char *token_at(const tok_list *toks, int n_real, int t) {
    return t < n_real ? toks->tokens[t] : MHA_PAD_TOKEN;
}

void mha_patterns_embed(float *x, const tok_list *toks, int n_real, int n, const mha_config *cfg) {
    const int d = cfg->d_model;
    const x_blocks b = blocks_for(cfg);
    MHA_EXPECT(n >= 1 && n <= MHA_MAX_N && n_real <= n);
    int rank[MHA_MAX_N]; /* the word's rank among distinct tokens, by first appearance */
    int words = 0;
    for (int t = 0; t < n; t++) {
        float *row = x + (size_t)t * d;
        if (b.pos >= 0) code_write(row + b.pos, t);
        if (b.cst >= 0) row[b.cst] = 1.0f, row[b.start] = t == 0 ? 1.0f : 0.0f;
        if (b.word >= 0) {
            const char *s = token_at(toks, n_real, t);
            rank[t] = -1;
            for (int u = 0; u < t && rank[t] < 0; u++)
                if (strcmp(token_at(toks, n_real, u), s) == 0) rank[t] = rank[u];
            if (rank[t] < 0) rank[t] = words++;
            code_write(row + b.word, rank[t]);
        }
    }
}

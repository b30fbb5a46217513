/* layers.h: the learner's layers, each a forward and a backward function side by
 * side (as in llm.c's train_gpt2.c), plus AdamW. Every matrix product goes through
 * the core's sgemm wrapper. Backward functions add (+=) into parameter gradients;
 * how they treat input gradients is said at each. Private to src/learn. */
#ifndef MHAVIZ_LEARN_LAYERS_H
#define MHAVIZ_LEARN_LAYERS_H

#include <stddef.h>

#include "attention.h" /* the kernel the backward blocks as */
#include "sublayer.h"  /* the attention sublayer of every forward, matmul_forward */
#include "transformer.h"

/* out (N, d) = wte[tok] + wpe[position]; N = B T rows, position = row mod T */
void encoder_forward(float *out, const int *tok, const float *wte, const float *wpe, int B, int T,
                     int d);
void encoder_backward(float *dwte, float *dwpe, const float *dout, const int *tok, int B, int T,
                      int d);

/* out (N, d) = (inp - mean) * rstd * gain + bias per row, rstd = 1 / sqrt(var + eps);
 * keeps mean, rstd (N) */
void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *gain,
                       const float *bias, int N, int d, float eps);
/* dinp (N, d) += the input gradient; dgain, dbias (d) += */
void layernorm_backward(float *dinp, float *dgain, float *dbias, const float *dout,
                        const float *inp, const float *gain, const float *mean, const float *rstd,
                        int N, int d);

/* s's weights and biases (sublayer.h) set to layer lp's attention: W^Q, W^K, W^V, W^O and
 * theirs; the caller sets the shape and the tensors. */
void tf_sublayer_weights(attn_sublayer *s, const tf_layer_params *lp);

/* matmul_forward, matmul_forward_add: the core's (sublayer.h).
 * dinp (N, c) = dinp_beta * dinp + dout w^T (skipped when dinp is NULL);
 * dw (c, oc) += inp^T dout; dbias (oc) += column sums of dout (when not NULL) */
void matmul_backward(float *dinp, float dinp_beta, float *dw, float *dbias, const float *dout,
                     const float *inp, const float *w, int N, int c, int oc);

/* logits (N, V) = inp (N, d) wte^T: the tied unembedding, wte (V, d) */
void unembed_tied_forward(float *logits, const float *inp, const float *wte, int N, int d, int V);
/* dinp (N, d) = dlogits wte (overwritten); dwte (V, d) += dlogits^T inp */
void unembed_tied_backward(float *dinp, float *dwte, const float *dlogits, const float *inp,
                           const float *wte, int N, int d, int V);

/* The backward of the causal attention the sublayer's heads computed (attn_sublayer:
 * its attn, the heads in ablate removed: no gradient through them). dq, dk, dv (B, T, d) =
 * (overwritten); scratch (B, T, T) at least: example b's heads take their dattn and
 * dscores in turn in its slot b */
void attention_backward(float *dq, float *dk, float *dv, float *scratch, const float *dconcat,
                        const float *q, const float *k, const float *v, const float *attn,
                        const unsigned char *ablate, int B, int T, int d, int h);

/* out (n) = act(inp): GELU (exact, with erf), ReLU or GELU's tanh form */
void act_forward(float *out, const float *inp, size_t n, tf_act act);
/* dinp (n) = act'(inp) * dout (overwritten); out (n) is act_forward's output of inp */
void act_backward(float *dinp, const float *inp, const float *out, const float *dout, size_t n,
                  tf_act act);

/* The exact GELU's loops use at most `cap` lanes (16: AVX-512F, 8: AVX2 + FMA, 1: plain
 * C; 0: the widest the processor runs, as at start) from now on, process-wide; returns
 * the lanes they will use. For tests, which check every loop the processor can run. */
int act_gelu_lanes(int cap);

/* out (n) = a + b */
void residual_forward(float *out, const float *a, const float *b, size_t n);

/* probs (N, C) = softmax of logits per row. Returns the summed cross-entropy over
 * the rows whose target is >= 0 and their count in *count. */
double crossentropy_forward(float *probs, const float *logits, const int *targets, int N, int C,
                            int *count);
/* dlogits (N, C) = (probs - onehot(target)) * scale on target rows, 0 elsewhere */
void crossentropy_backward(float *dlogits, const float *probs, const int *targets, int N, int C,
                           float scale);

/* One AdamW step (t >= 1 counts steps) over n parameters, as torch.optim.AdamW:
 * p -= lr * (m_hat / (sqrt(v_hat) + eps) + wd * p). */
void adamw_update(float *p, const float *g, float *m, float *v, size_t n, float lr, float beta1,
                  float beta2, float eps, float wd, long t);

#endif

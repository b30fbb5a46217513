/* train_source.h: the model the window trains, as a model source (source.h): its
 * layers on the held-out example, filled from the trainer's latest snapshot
 * (trainer.h) with the real tensors the heads computed. It points into the
 * snapshot and copies nothing; the trainer owns what it reads. No SDL. */
#ifndef MHAVIZ_TRAIN_SOURCE_H
#define MHAVIZ_TRAIN_SOURCE_H

#include "source.h"
#include "train_view.h"

typedef struct {
    const train_view *tv;            /* the snapshot shown */
    const char *labels[TRAIN_MAX_T]; /* (T) the example's tokens as the task's symbols */
} train_source;

/* Points *src at ts, which describes the snapshot tv: layer_count is the run's
 * layers (0 before any run), layer(i) fills layer i (-1 when the snapshot holds
 * no tensors), describe "trained on pair, step 200, h = 2, d_model = 32". Valid
 * until tv is replaced by the next snapshot; call again then. */
void train_source_init(model_source *src, train_source *ts, const train_view *tv);

#endif

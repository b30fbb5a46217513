/* controls.h: the pure state transitions behind the live controls: the next and
 * previous h (divisors of d_model) and d_model (a ladder of useful sizes that h
 * divides). Each says why when a value cannot be reached. No SDL here. */
#ifndef MHAVIZ_CONTROLS_H
#define MHAVIZ_CONTROLS_H

#include <stddef.h>

/* The d_model ladder: 8, 16, 24, 32, 48, 64, 96, 128, ... 3072, 4096. */
int controls_ladder_count(void);
int controls_ladder_value(int i);

/* Next (dir = +1) or previous (dir = -1) divisor of d after h. Returns it, or 0
 * with the reason in why (e.g. h already equals d_model). */
int controls_step_h(int h, int d, int dir, char *why, size_t len);

/* Next or previous ladder value from d that h divides. Returns it, or 0 with the reason. */
int controls_step_d(int h, int d, int dir, char *why, size_t len);

#endif

/* markup_driver: the caption markup's runs for markup_check.py. Each input line is
 * one markup in hex (UTF-8 bytes; may hold '\n'); each output is "E COLUMN" for
 * broken markup, or "R N" then N lines "LEVEL BOLD HEX" (the run's text in hex). */
#include <stdio.h>
#include <string.h>

#include "view.h"

static int hexval(int c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int main(void) {
    static char line[1 << 16], text[1 << 15];
    static view_markup_run runs[4096];
    while (fgets(line, sizeof line, stdin)) {
        size_t n = 0;
        for (size_t i = 0; hexval(line[i]) >= 0 && hexval(line[i + 1]) >= 0; i += 2)
            text[n++] = (char)(hexval(line[i]) * 16 + hexval(line[i + 1]));
        text[n] = '\0';
        char err[160];
        int k = view_markup_runs(text, runs, 4096, err, sizeof err);
        const int ok = view_markup_check(text, NULL, 0) == 0;
        if ((k >= 0) != ok) {
            printf("X check and runs disagree\n");
            continue;
        }
        if (k < 0) {
            int col = 0;
            sscanf(err, "column %d", &col);
            printf("E %d\n", col);
            continue;
        }
        printf("R %d\n", k);
        for (int i = 0; i < k; i++) {
            printf("%d %d ", runs[i].level, runs[i].bold);
            for (const unsigned char *p = (const unsigned char *)runs[i].text; *p; p++)
                printf("%02x", *p);
            printf("\n");
        }
    }
    return 0;
}

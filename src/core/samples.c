/* samples.c: parses the embedded copy of assets/samples.tsv once, on first use.
 * Format: one sample a line, "name<TAB>text"; '#' lines and blank lines are skipped. */
#include "samples.h"

#include <string.h>

#include "expect.h"

extern const unsigned char mhaviz_samples_tsv[];
extern const unsigned long mhaviz_samples_tsv_len;

#define MAX_SAMPLES 64
#define MAX_BYTES 65536

static char buf[MAX_BYTES];
static sample list[MAX_SAMPLES];
static int count = -1;

static void parse(void) {
    count = 0;
    unsigned long len = mhaviz_samples_tsv_len;
    MHA_EXPECT(len < MAX_BYTES);
    memcpy(buf, mhaviz_samples_tsv, len);
    buf[len] = '\0';
    char *line = buf;
    while (line && *line && count < MAX_SAMPLES) {
        char *next = strchr(line, '\n');
        if (next) *next++ = '\0';
        size_t l = strlen(line);
        if (l && line[l - 1] == '\r') line[l - 1] = '\0';
        char *tab = strchr(line, '\t');
        if (line[0] != '#' && tab) {
            *tab = '\0';
            list[count].name = line;
            list[count].text = tab + 1;
            count++;
        }
        line = next;
    }
}

int samples_count(void) {
    if (count < 0) parse();
    return count;
}

const sample *samples_get(int i) {
    if (i < 0 || i >= samples_count()) return NULL;
    return &list[i];
}

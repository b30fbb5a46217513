/* text_file.h: --text-file FILE, read whole and checked to be text before any
 * mode starts (main.c). */
#ifndef MHAVIZ_TEXT_FILE_H
#define MHAVIZ_TEXT_FILE_H

#include <stddef.h>

/* The most a text file may hold: 1 MiB. A figure shows at most 512 tokens (a
 * loaded model 1024 positions), a few KiB of prose; a MiB is a long chapter
 * and bounds the memory, /dev/zero and a log or binary given by mistake. */
#define TEXT_FILE_MAX (1u << 20)

/* Reads path ("-": standard input) whole: a regular file, a pipe or FIFO (one
 * with no writer reads as empty, never waits for one) or a character device, at
 * most TEXT_FILE_MAX bytes. The text must be UTF-8 without NUL bytes or control
 * characters other than tab, line feed, carriage return, form feed and vertical
 * tab, and not blank; a leading byte order mark is dropped. Returns 0 and *out
 * (malloc'd, NUL-terminated: the caller frees it), 1 when it cannot be read
 * (missing, unreadable, a folder, a socket, a read error) or 2 when it was read
 * but is not a text to use, with err as "FILE: reason". */
int text_file_read(const char *path, char **out, char *err, size_t errlen);

/* text_file_read for the window and the files it opens (view files, their
 * text-file): the same rules, but only a regular file is read. Anything else (a
 * FIFO, whose read would wait for its writer, a device, a socket; "-" when
 * standard input is not a regular file) is refused by its type before a byte is
 * read, with 1 and err "FILE: not a regular file (a FIFO)": no read blocks. */
int text_file_read_regular(const char *path, char **out, char *err, size_t errlen);

/* The name of path in messages: "standard input" for "-", else path. */
const char *text_file_name(const char *path);

#endif

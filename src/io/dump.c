/* dump.c: the one --dump writer (see dump.h): a source's files, asked for one at
 * a time, written as NumPy files, text and folders, and the built-in layer's list
 * of files (an attn_layer as .npy, tokens.txt, meta.json). All or nothing: the files go into a
 * temporary folder beside the target, which takes the target's place only when every file is
 * complete. Removes only what it made or what an earlier dump wrote; it never deletes a file it
 * does not know. */
#define _GNU_SOURCE /* renameat2 and RENAME_EXCHANGE */
#include "dump.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "cleanup.h"
#include "mha.h"
#include "npy.h"

#define DUMP_FILES 16
static const char *const dump_names[DUMP_FILES] = {
    "X.npy",   "W_Q.npy",      "W_K.npy",    "W_V.npy",   "W_O.npy",   "Q.npy",
    "K.npy",   "V.npy",        "scores.npy", "attn.npy",  "heads.npy", "concat.npy",
    "out.npy", "out_full.npy", "tokens.txt", "meta.json",
};
/* what a loaded model's dump writes besides (model_dump.c): at the top, and in
   each layer_L folder */
static const char *const model_names[] = {"tokens.json",
                                          "final.npy",
                                          "next.json",
                                          "fill.json", /* an encoder's */
                                          "sweep.json",
                                          "generated.json", /* --model --generate */
                                          "overview.npy",   /* --model: every head pooled */
                                          /* --train --sweep */ NULL};
static const char *const layer_names[] = {"attn.npy", "out.npy", "Q.npy", "K.npy", "V.npy", NULL};
/* what --train's dump writes besides tokens.txt: at the top, in each layerN folder
   (no underscore: N is a trained block), and weights/ holds one NAME.npy a parameter */
static const char *const train_names[] = {"logits.npy", "targets.txt", "train.json", NULL};
static const char *const train_layer_names[] = {
    "resid_in.npy", "X.npy",     "Q.npy",      "K.npy",   "V.npy",         "scores.npy",
    "attn.npy",     "heads.npy", "concat.npy", "out.npy", "resid_out.npy", NULL};

int dump_mkdirs(const char *dir, char *err, size_t errlen) {
    char path[4096];
    if (strlen(dir) == 0 || strlen(dir) >= sizeof path) {
        snprintf(err, errlen, "--dump: bad folder name");
        return -1;
    }
    strcpy(path, dir);
    for (char *p = path + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char saved = *p;
            *p = '\0';
            struct stat st;
            if (stat(path, &st) == 0) {
                if (!S_ISDIR(st.st_mode)) {
                    snprintf(err, errlen, "cannot write %s: %s exists and is not a folder", dir,
                             path);
                    return -1;
                }
            } else if (mkdir(path, 0777) != 0 && errno != EEXIST) {
                snprintf(err, errlen, "cannot write %s: %s", dir, strerror(errno));
                return -1;
            }
            *p = saved;
            if (saved == '\0') break;
        }
    }
    return 0;
}

/* --- what a run made, to undo on failure -------------------------------------- */

#define DUMP_MAX_PARENTS 32
#define DUMP_PATH_ROOM 64 /* bytes a dump adds to its folder's name, at most */

typedef struct dump_run {
    const char *shown; /* the folder as the user named it, for messages */
    char target[4096]; /* the folder, no trailing slash (symbolic links resolved) */
    char tmp[4200];    /* the temporary folder beside it */
    int tmp_handle;
    int *handles; /* the files and folders it made in the temporary folder */
    int handle_count, handle_cap;
    char parents[DUMP_MAX_PARENTS][4096]; /* folders created for the target, outermost first */
    int parent_handles[DUMP_MAX_PARENTS];
    int parent_count;
} dump_run;

/* Creates the missing folders of path (mkdir -p), registering each made one so a
 * failure or a signal removes it again. Returns 0, or -1 with a message. */
static int make_parents(dump_run *r, const char *path, char *err, size_t errlen) {
    char p[4096];
    snprintf(p, sizeof p, "%s", path);
    for (char *c = p + 1;; c++) {
        if (*c != '/' && *c != '\0') continue;
        char saved = *c;
        *c = '\0';
        struct stat st;
        if (stat(p, &st) == 0) {
            if (!S_ISDIR(st.st_mode)) {
                snprintf(err, errlen, "cannot write %s: %s exists and is not a folder", r->shown,
                         p);
                return -1;
            }
        } else {
            if (r->parent_count == DUMP_MAX_PARENTS) {
                snprintf(err, errlen, "cannot write %s: too many missing folders", r->shown);
                return -1;
            }
            cleanup_hold();
            int rc = mkdir(p, 0777), saved_errno = errno;
            if (rc == 0) {
                snprintf(r->parents[r->parent_count], sizeof r->parents[0], "%s", p);
                r->parent_handles[r->parent_count++] = cleanup_add(p, 1);
            }
            cleanup_release();
            if (rc != 0 && saved_errno != EEXIST) {
                snprintf(err, errlen, "cannot write %s: %s", r->shown, strerror(saved_errno));
                return -1;
            }
        }
        *c = saved;
        if (saved == '\0') return 0;
    }
}

/* name is one of names, or a temporary one it left ("X.npy.tmp-AbC123"). */
static int is_one_of(const char *name, const char *const *names, int count) {
    for (int i = 0; i < count && names[i]; i++) {
        size_t len = strlen(names[i]);
        if (strncmp(name, names[i], len) != 0) continue;
        if (name[len] == '\0') return 1;
        if (strncmp(name + len, ".tmp-", 5) == 0 && strlen(name + len + 5) == 6) return 1;
    }
    return 0;
}

/* Name of a file a dump writes at its top, or a temporary one it left. */
static int is_dump_name(const char *name) {
    return is_one_of(name, dump_names, DUMP_FILES) || is_one_of(name, model_names, 8) ||
           is_one_of(name, train_names, 8);
}

/* prefix followed by a number without zero padding, 1 or more */
static int is_numbered(const char *name, const char *prefix) {
    size_t len = strlen(prefix);
    if (strncmp(name, prefix, len) != 0 || name[len] < '1' || name[len] > '9') return 0;
    for (const char *c = name + len + 1; *c; c++)
        if (*c < '0' || *c > '9') return 0;
    return strlen(name) < 16;
}

/* A parameter file of weights/ ("layer1_W_Q.npy"), or a temporary one it left. */
static int is_weight_file(const char *name) {
    const char *ext = strstr(name, ".npy");
    if (!ext || ext == name) return 0;
    for (const char *c = name; c < ext; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_'))
            return 0;
    return ext[4] == '\0' || (strncmp(ext + 4, ".tmp-", 5) == 0 && strlen(ext + 9) == 6);
}

/* The kinds of folder a dump writes: a loaded model's "layer_12", --train's
   "layer2" and "weights". 0 for any other name. */
enum { FOLDER_NONE, FOLDER_MODEL_LAYER, FOLDER_TRAIN_LAYER, FOLDER_WEIGHTS };
static int folder_kind(const char *name) {
    if (is_numbered(name, "layer_")) return FOLDER_MODEL_LAYER;
    if (is_numbered(name, "layer")) return FOLDER_TRAIN_LAYER;
    if (strcmp(name, "weights") == 0) return FOLDER_WEIGHTS;
    return FOLDER_NONE;
}

static int is_layer_folder(const char *name) {
    return folder_kind(name) != FOLDER_NONE;
}

/* A file a dump writes into a folder of that kind (or a temporary one it left). */
static int in_folder(int kind, const char *name) {
    switch (kind) {
    case FOLDER_MODEL_LAYER: return is_one_of(name, layer_names, 8);
    case FOLDER_TRAIN_LAYER: return is_one_of(name, train_layer_names, 16);
    case FOLDER_WEIGHTS: return is_weight_file(name);
    default: return 0;
    }
}

/* A folder of that kind holding only what a dump writes into one (a foreign file
   found is copied into name). */
static int layer_folder_clean(const char *path, int kind, char *name, size_t len) {
    DIR *d = opendir(path);
    if (!d) return 0;
    struct dirent *e;
    int clean = 1;
    while (clean && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (!in_folder(kind, e->d_name)) {
            clean = 0;
            snprintf(name, len, "%s", e->d_name);
        }
    }
    closedir(d);
    return clean;
}

/* Removes the files of a dump from folder dir and then dir itself: only names a
 * dump writes, so a folder that gained another file meanwhile stays. */
static void remove_dump_folder(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[4200 + 256];
        while ((e = readdir(d)) != NULL)
            if (is_dump_name(e->d_name)) {
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                unlink(path);
            } else if (is_layer_folder(e->d_name)) { /* its own files, then itself */
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                DIR *ld = opendir(path);
                struct dirent *le;
                char file[4200 + 512];
                while (ld && (le = readdir(ld)) != NULL)
                    if (in_folder(folder_kind(e->d_name), le->d_name)) {
                        snprintf(file, sizeof file, "%s/%s", path, le->d_name);
                        unlink(file);
                    }
                if (ld) closedir(ld);
                rmdir(path);
            }
        closedir(d);
    }
    rmdir(dir);
}

/* The folder already exists: it may be replaced only when it is empty or holds
 * nothing but an earlier dump, is not a mount point and does not hold the current
 * folder. Returns 0, or -1 with the reason. */
static int check_replaceable(const dump_run *r, const char *parent, char *err, size_t errlen) {
    DIR *d = opendir(r->target);
    if (!d) {
        snprintf(err, errlen, "cannot write %s: %s", r->shown, strerror(errno));
        return -1;
    }
    struct dirent *e;
    int foreign = 0;
    char name[256] = "";
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char sub[4200 + 256], inner[256] = "";
        snprintf(sub, sizeof sub, "%s/%s", r->target, e->d_name);
        if (is_layer_folder(e->d_name) &&
            !layer_folder_clean(sub, folder_kind(e->d_name), inner, sizeof inner)) {
            foreign = 1;
            snprintf(name, sizeof name, "%.15s/%.200s", e->d_name, inner);
        } else if (!is_dump_name(e->d_name) && !is_layer_folder(e->d_name)) {
            foreign = 1;
            snprintf(name, sizeof name, "%s", e->d_name);
        }
        if (foreign) {
            for (char *c = name; *c; c++)
                if ((unsigned char)*c < 0x20) *c = '?'; /* the message stays one line */
            break;
        }
    }
    closedir(d);
    if (foreign) {
        snprintf(err, errlen,
                 "cannot write %s: the folder holds '%s', which a dump does not write; --dump "
                 "replaces a folder only when it is empty or an earlier dump",
                 r->shown, name);
        return -1;
    }
    struct stat st, pst;
    if (stat(r->target, &st) != 0 || stat(parent, &pst) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", r->shown, strerror(errno));
        return -1;
    }
    if (st.st_dev != pst.st_dev) {
        snprintf(err, errlen,
                 "cannot write %s: it is a mount point, which --dump cannot replace; give a "
                 "folder inside it",
                 r->shown);
        return -1;
    }
    char cwd[PATH_MAX], real[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) && realpath(r->target, real)) {
        size_t len = strlen(real);
        if (strncmp(cwd, real, len) == 0 && (cwd[len] == '\0' || cwd[len] == '/')) {
            snprintf(err, errlen,
                     "cannot write %s: it holds the current folder, which --dump would replace",
                     r->shown);
            return -1;
        }
    }
    return 0;
}

/* Undoes a run that failed: the temporary folder and the parents it created. */
static void dump_rollback(dump_run *r) {
    cleanup_hold();
    if (r->tmp[0]) remove_dump_folder(r->tmp);
    for (int i = 0; i < r->handle_count; i++) cleanup_forget(r->handles[i]);
    r->handle_count = 0;
    cleanup_forget(r->tmp_handle);
    for (int i = r->parent_count - 1; i >= 0; i--) {
        rmdir(r->parents[i]);
        cleanup_forget(r->parent_handles[i]);
    }
    cleanup_release();
}

/* "cannot write TARGET/NAME: reason" from a message about the temporary path. */
static void retarget(char *err, size_t errlen, const dump_run *r, const char *tmp_path,
                     const char *name) {
    char reason[300] = "unknown error";
    const char *prefix = "cannot write ";
    size_t plen = strlen(prefix), tlen = strlen(tmp_path);
    if (strncmp(err, prefix, plen) == 0 && strncmp(err + plen, tmp_path, tlen) == 0 &&
        strncmp(err + plen + tlen, ": ", 2) == 0)
        snprintf(reason, sizeof reason, "%s", err + plen + tlen + 2);
    snprintf(err, errlen, "cannot write %s/%s: %s", r->shown, name, reason);
}

/* The layer's 14 tensors in the order of dump_names. */
static void layer_tensors(const float *data[14], const attn_layer *L) {
    const float *all[14] = {L->x, L->w_q,    L->w_k,  L->w_v,   L->w_o,    L->q,   L->k,
                            L->v, L->scores, L->attn, L->heads, L->concat, L->out, L->out_full};
    memcpy(data, all, sizeof all);
}

/* meta.json of the built-in layer, printed into f. */
static void print_meta(FILE *f, const attn_layer *L) {
    const int n = L->n, d = L->d_model, h = L->h, dk = L->d_k;
    const int patterns = L->designed;
    fprintf(f,
            "{\n  \"n\": %d,\n  \"n_real\": %d,\n  \"d_model\": %d,\n  \"h\": %d,\n"
            "  \"d_k\": %d,\n  \"d_v\": %d,\n  \"seed\": %llu,\n  \"mask\": \"%s\",\n",
            n, L->n_real, d, h, dk, dk, (unsigned long long)L->seed,
            L->mask == ATTN_MASK_CAUSAL ? "causal" : "none");
    if (L->pad)
        fprintf(f, "  \"pad\": %d,\n", L->pad);
    else
        fprintf(f, "  \"pad\": null,\n");
    /* K/V heads: h (one per head), or fewer shared by groups (--kv-heads) */
    fprintf(f, "  \"kv_heads\": %d,\n", L->h_kv > 0 ? L->h_kv : h);
    /* the temperature with the fewest digits that read back as the same float */
    char temp[32];
    for (int prec = 1; prec <= 9; prec++) {
        snprintf(temp, sizeof temp, "%.*g", prec, (double)L->temperature);
        if (strtof(temp, NULL) == L->temperature && !strchr(temp, 'e')) break;
    }
    fprintf(f, "  \"scale\": %s,\n  \"temperature\": %s,\n  \"ablated\": [",
            L->scaled ? "true" : "false", temp);
    for (int i = 0, first = 1; i < h; i++)
        if (attn_layer_is_off(L, i)) {
            fprintf(f, first ? "%d" : ", %d", i + 1);
            first = 0;
        }
    fprintf(f, "],\n  \"head_patterns\": ");
    if (patterns) {
        fprintf(f, "[");
        for (int i = 0; i < h; i++)
            fprintf(f, "%s\"%s\"", i ? ", " : "",
                    attn_layer_head_note(L, i) ? attn_layer_head_note(L, i) : "");
        fprintf(f, "],\n");
    } else {
        fprintf(f, "null,\n");
    }
    fprintf(f,
            "  \"weights\": {\"mode\": \"%s\", \"init\": \"glorot_uniform\", \"limit\": %.9g, "
            "\"shape\": [%d, %d], \"files\": [\"W_Q.npy\", \"W_K.npy\", \"W_V.npy\", "
            "\"W_O.npy\"], \"head_split\": \"head i uses columns [i*d_k, (i+1)*d_k) of W_Q, "
            "W_K, W_V and rows [i*d_v, (i+1)*d_v) of W_O\"%s}\n}\n",
            patterns ? "patterns" : "random", (double)sqrtf(3.0f / (float)d), d, d,
            patterns ? ", \"designed\": \"the W_Q and W_K columns of every head with a pattern "
                       "other than none are constructed; all else is glorot_uniform\""
                     : "");
}

/* Registers a path made in the temporary folder (before it exists: a signal
   removes it). Returns 0, or -1 out of memory. */
static int track(dump_run *r, const char *path, int is_dir) {
    if (r->handle_count == r->handle_cap) {
        int cap = r->handle_cap ? 2 * r->handle_cap : 32;
        int *h = realloc(r->handles, (size_t)cap * sizeof *h);
        if (!h) return -1;
        r->handles = h;
        r->handle_cap = cap;
    }
    r->handles[r->handle_count++] = cleanup_add(path, is_dir);
    return 0;
}

/* Puts the complete temporary folder in the target's place: a rename when there
 * is none, else an atomic exchange (or, where the filesystem has none, two
 * renames) after which the earlier dump is removed. Signals wait meanwhile.
 * Returns 0, or -1 with a message (the target is then as it was). */
static int dump_commit(dump_run *r, int exists, char *err, size_t errlen) {
    int rc = 0, saved = 0;
    char old[4300] = "";
    cleanup_hold();
    if (!exists) {
        rc = rename(r->tmp, r->target);
        saved = errno;
    } else {
        rc = renameat2(AT_FDCWD, r->tmp, AT_FDCWD, r->target, RENAME_EXCHANGE);
        saved = errno;
        if (rc == 0) {
            snprintf(old, sizeof old, "%s", r->tmp); /* the earlier dump is there now */
        } else if (saved == EINVAL || saved == ENOSYS || saved == ENOTSUP) {
            /* no exchange here: move the earlier dump aside, then the new one in */
            memcpy(old, r->target, strlen(r->target) + 1);
            memcpy(old + strlen(old), ".old-XXXXXX", 12);
            rc = mkdtemp(old) ? 0 : -1; /* a fresh empty name that rename may take */
            if (rc == 0 && (rc = rename(r->target, old)) == 0 &&
                (rc = rename(r->tmp, r->target)) != 0) {
                saved = errno;
                rename(old, r->target);
            } else if (rc != 0) {
                saved = errno;
                rmdir(old);
            }
            if (rc != 0) old[0] = '\0';
        }
    }
    if (rc == 0) {
        if (old[0]) remove_dump_folder(old);
        for (int i = 0; i < r->handle_count; i++) cleanup_forget(r->handles[i]);
        r->handle_count = 0;
        cleanup_forget(r->tmp_handle);
        for (int i = 0; i < r->parent_count; i++) cleanup_forget(r->parent_handles[i]);
        r->tmp[0] = '\0';
        r->parent_count = 0;
        char note[CLEANUP_PATH]; /* a signal that waited acts on a whole dump */
        snprintf(note, sizeof note, "%.4000s is written in full", r->shown);
        cleanup_done(note);
    }
    cleanup_release();
    if (rc != 0) snprintf(err, errlen, "cannot write %s: %s", r->shown, strerror(saved));
    return rc;
}

/* Sets r->target from dir (without trailing slashes; a link to a folder: the
 * folder) and its parent folder into parent (4096 bytes). Returns 0, or -1 with a
 * message when dir names no folder of its own ("", "/", "." or ".."). */
static int dump_target(dump_run *r, const char *dir, char *parent, size_t parent_len, char *err,
                       size_t errlen) {
    /* the target without trailing slashes; "." and ".." name no folder of its own */
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/') len--;
    if (len == 0) {
        snprintf(err, errlen, "--dump: bad folder name");
        return -1;
    }
    /* room for the longest path a dump makes inside its temporary folder
       (".tmp-XXXXXX/weights/layer2_ln1_gain.npy.tmp-XXXXXX", 51 bytes) */
    if (len + DUMP_PATH_ROOM >= sizeof r->target) {
        snprintf(err, errlen,
                 "cannot write %s: the folder name is too long (%zu bytes; at most %d)", dir, len,
                 (int)sizeof r->target - 1 - DUMP_PATH_ROOM);
        return -1;
    }
    memcpy(r->target, dir, len);
    r->target[len] = '\0';
    struct stat st;
    if (lstat(r->target, &st) == 0 && S_ISLNK(st.st_mode)) {
        char real[PATH_MAX]; /* a link to a folder: the dump replaces the folder */
        if (realpath(r->target, real) && strlen(real) + 32 < sizeof r->target)
            snprintf(r->target, sizeof r->target, "%s", real);
    }
    const char *slash = strrchr(r->target, '/');
    const char *base = slash ? slash + 1 : r->target;
    if (strcmp(r->target, "/") == 0 || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
        snprintf(err, errlen,
                 "cannot write %s: --dump replaces its folder as a whole, so it needs a folder "
                 "name of its own (not /, . or ..)",
                 dir);
        return -1;
    }
    if (!slash)
        snprintf(parent, parent_len, ".");
    else if (slash == r->target)
        snprintf(parent, parent_len, "/");
    else
        snprintf(parent, parent_len, "%.*s", (int)(slash - r->target), r->target);
    return 0;
}

/* Every name along dir must leave room for ".tmp-XXXXXX" (the temporary folder
   beside the last). Returns 0, or -1 with the reason. */
static int check_name_lengths(const char *dir, char *err, size_t errlen) {
    const size_t len = strlen(dir);
    for (size_t i = 0, start = 0; i <= len; i++) {
        if (i < len && dir[i] != '/') continue;
        if (i - start + 11 > NAME_MAX) {
            snprintf(err, errlen,
                     "cannot write %s: a name in it is too long (%zu bytes; at most %d)", dir,
                     i - start, NAME_MAX - 11);
            return -1;
        }
        start = i + 1;
    }
    return 0;
}

/* What can be known before writing: the target's name, and when it exists,
 * that it may be replaced. *exists 1 when it does. Returns 0, or -1 with the
 * reason. Changes nothing on disk. */
static int dump_prepare(dump_run *r, const char *dir, char *parent, size_t parent_len, int *exists,
                        char *err, size_t errlen) {
    r->shown = dir;
    r->tmp_handle = CLEANUP_NONE;
    *exists = 0;
    if (dump_target(r, dir, parent, parent_len, err, errlen) != 0) return -1;
    struct stat st;
    if (stat(r->target, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "cannot write %s: %s exists and is not a folder", dir, r->target);
            return -1;
        }
        *exists = 1;
        if (check_name_lengths(r->target, err, errlen) != 0) return -1;
        return check_replaceable(r, parent, err, errlen);
    }
    if ((errno == ENOENT || errno == ENAMETOOLONG) &&
        check_name_lengths(r->target, err, errlen) != 0)
        return -1;
    if (errno != ENOENT && errno != ENOTDIR) {
        snprintf(err, errlen, "cannot write %s: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* The deepest folder of path that exists must be a folder we may write in (the
 * temporary folder and any missing parents go there); nothing above it may be a
 * file. Returns 0, or -1 with the reason. */
static int check_writable_above(const dump_run *r, const char *path, char *err, size_t errlen) {
    char p[4096];
    snprintf(p, sizeof p, "%s", path);
    for (;;) {
        struct stat st;
        if (stat(p, &st) == 0) {
            if (!S_ISDIR(st.st_mode)) {
                snprintf(err, errlen, "cannot write %s: %s exists and is not a folder", r->shown,
                         p);
                return -1;
            }
            if (access(p, W_OK | X_OK) != 0) {
                snprintf(err, errlen, "cannot write %s: %s", r->shown, strerror(errno));
                return -1;
            }
            return 0;
        }
        if (errno == ENOTDIR) { /* a file above: say which */
            char *slash = strrchr(p, '/');
            if (slash && slash != p) {
                *slash = '\0';
                continue;
            }
        } else if (errno != ENOENT) {
            snprintf(err, errlen, "cannot write %s: %s", r->shown, strerror(errno));
            return -1;
        }
        char *slash = strrchr(p, '/');
        if (!slash)
            snprintf(p, sizeof p, ".");
        else if (slash == p)
            p[1] = '\0';
        else
            *slash = '\0';
    }
}

int dump_check(const char *dir, char *err, size_t errlen) {
    dump_run *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "cannot write %s: out of memory", dir);
        return -1;
    }
    char parent[4096];
    int exists = 0;
    int rc = dump_prepare(r, dir, parent, sizeof parent, &exists, err, errlen);
    if (rc == 0) rc = check_writable_above(r, parent, err, errlen);
    free(r);
    return rc;
}

static int put_files(dump_run *r, dump_file_fn next, void *ud, char *err, size_t errlen);

static int dump_write_run(dump_run *r, const char *dir, dump_file_fn next, void *ud, char *err,
                          size_t errlen) {
    char parent[4096];
    int exists = 0;
    if (dump_prepare(r, dir, parent, sizeof parent, &exists, err, errlen) != 0) return -1;
    if (!exists && make_parents(r, parent, err, errlen) != 0) {
        dump_rollback(r);
        return -1;
    }

    /* the temporary folder beside the target, so the final rename stays on one
       filesystem */
    memcpy(r->tmp, r->target, strlen(r->target) + 1);
    memcpy(r->tmp + strlen(r->tmp), ".tmp-XXXXXX", 12);
    cleanup_hold();
    int made = atomic_mkdtemp(r->tmp) == 0, saved = errno; /* 0777 & ~umask */
    if (made) r->tmp_handle = cleanup_add(r->tmp, 1);
    cleanup_release();
    if (!made) {
        r->tmp[0] = '\0';
        snprintf(err, errlen, "cannot write %s: %s", dir, strerror(saved));
        dump_rollback(r);
        return -1;
    }

    if (put_files(r, next, ud, err, errlen) != 0) {
        dump_rollback(r);
        return -1;
    }
    if (dump_commit(r, exists, err, errlen) != 0) {
        dump_rollback(r);
        return -1;
    }
    return 0;
}

int dump_write(const char *dir, dump_file_fn next, void *ud, char *err, size_t errlen) {
    dump_run *r = calloc(1, sizeof *r); /* 150 KB of paths: not on the stack */
    if (!r) {
        snprintf(err, errlen, "cannot write %s: out of memory", dir);
        return -1;
    }
    int rc = dump_write_run(r, dir, next, ud, err, errlen);
    free(r->handles);
    free(r);
    return rc;
}

int dump_layer_file(void *ud, int i, dump_file *f, char *err, size_t errlen) {
    dump_layer *dl = ud;
    const attn_layer *L = dl->L;
    const int n = L->n, d = L->d_model, h = L->h, dk = L->d_k;
    if (i >= DUMP_FILES) return 0;
    memset(f, 0, sizeof *f);
    snprintf(f->rel, sizeof f->rel, "%s", dump_names[i]);
    if (i < 14) {
        const float *data[14];
        layer_tensors(data, L);
        const int shapes[14][3] = {{n, d, 0},  {d, d, 0}, {d, d, 0}, {d, d, 0}, {d, d, 0},
                                   {n, d, 0},  {n, d, 0}, {n, d, 0}, {h, n, n}, {h, n, n},
                                   {h, n, dk}, {n, d, 0}, {n, d, 0}, {n, d, 0}};
        f->kind = DUMP_NPY;
        f->data = data[i];
        memcpy(f->shape, shapes[i], sizeof f->shape);
        f->ndim = shapes[i][2] > 0 ? 3 : 2;
        return 1;
    }
    /* tokens.txt, a position a line, then meta.json */
    free(dl->meta);
    dl->meta = NULL;
    dl->meta_len = 0;
    FILE *m = open_memstream(&dl->meta, &dl->meta_len);
    if (!m) {
        snprintf(err, errlen, "out of memory for %s", dump_names[i]);
        return -1;
    }
    if (i == 14)
        for (int t = 0; t < n; t++) fprintf(m, "%s\n", attn_layer_token(L, t));
    else
        print_meta(m, L);
    const int bad = ferror(m);
    if (fclose(m) != 0 || bad) {
        snprintf(err, errlen, "out of memory for %s", dump_names[i]);
        return -1;
    }
    f->kind = DUMP_TEXT;
    f->text = dl->meta;
    f->len = dl->meta_len;
    return 1;
}

int dump_write_layer(const char *dir, const attn_layer *L, char *err, size_t errlen) {
    const float *data[14];
    layer_tensors(data, L);
    for (int i = 0; i < 14; i++)
        if (!data[i]) { /* refused before anything is written */
            snprintf(err, errlen, "cannot write %s: the layer has no %.*s", dir,
                     (int)(strlen(dump_names[i]) - 4), dump_names[i]);
            return -1;
        }
    dump_layer dl = {L, NULL, 0};
    int rc = dump_write(dir, dump_layer_file, &dl, err, errlen);
    free(dl.meta);
    return rc;
}

/* rel as the target names it, for messages; 0 when it is not a name a dump may
   write (a folder layer_L, a file of its lists) */
static int rel_ok(const char *rel) {
    const char *slash = strchr(rel, '/');
    if (!slash) return is_dump_name(rel) || is_layer_folder(rel);
    char folder[32];
    if ((size_t)(slash - rel) >= sizeof folder) return 0;
    memcpy(folder, rel, (size_t)(slash - rel));
    folder[slash - rel] = '\0';
    return !strchr(slash + 1, '/') && in_folder(folder_kind(folder), slash + 1);
}

static int put_folder(dump_run *r, const char *rel, char *err, size_t errlen) {
    MHA_EXPECT(rel_ok(rel) && !strchr(rel, '/'));
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", r->tmp, rel);
    if (track(r, path, 1) != 0 || mkdir(path, 0777) != 0) {
        snprintf(err, errlen, "cannot write %s/%s: %s", r->shown, rel, strerror(errno));
        return -1;
    }
    return 0;
}

static int put_npy(dump_run *r, const char *rel, const float *data, const int *shape, int ndim,
                   char *err, size_t errlen) {
    MHA_EXPECT(rel_ok(rel));
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", r->tmp, rel);
    if (track(r, path, 0) != 0) {
        snprintf(err, errlen, "cannot write %s: out of memory", r->shown);
        return -1;
    }
    if (npy_write_f32(path, data, shape, ndim, err, errlen) != 0) {
        retarget(err, errlen, r, path, rel);
        return -1;
    }
    return 0;
}

static int put_text(dump_run *r, const char *rel, const char *text, size_t len, char *err,
                    size_t errlen) {
    MHA_EXPECT(rel_ok(rel));
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", r->tmp, rel);
    if (track(r, path, 0) != 0) {
        snprintf(err, errlen, "cannot write %s: out of memory", r->shown);
        return -1;
    }
    atomic_file af;
    int rc = atomic_open(&af, path, err, errlen);
    if (rc == 0) {
        atomic_write(&af, text, len); /* a failure shows at the commit */
        rc = atomic_commit(&af, err, errlen);
    }
    if (rc != 0) retarget(err, errlen, r, path, rel);
    return rc;
}

/* Asks next for every file and writes each into the temporary folder as it comes. */
static int put_files(dump_run *r, dump_file_fn next, void *ud, char *err, size_t errlen) {
    dump_file f;
    for (int i = 0;; i++) {
        const int more = next(ud, i, &f, err, errlen);
        if (more <= 0) return more;
        int rc = f.kind == DUMP_FOLDER ? put_folder(r, f.rel, err, errlen)
                 : f.kind == DUMP_NPY  ? put_npy(r, f.rel, f.data, f.shape, f.ndim, err, errlen)
                                       : put_text(r, f.rel, f.text, f.len, err, errlen);
        if (rc != 0) return -1;
    }
}

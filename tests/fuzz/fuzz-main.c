/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The driver of a fuzz target outside libFuzzer: runs every file named on
 * the command line (directories: every file in them, sorted) through
 * LLVMFuzzerTestOneInput once and prints a TAP line for each. A crash or
 * an abort of the target fails the test; so does an input that cannot be
 * read. This is how the normal build replays the committed corpora.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static unsigned tests, failed;

static void run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0, n;

    tests++;
    if (!f) {
        printf("not ok %u - %s: cannot open\n", tests, path);
        failed++;
        return;
    }
    do {
        if (len == cap) {
            cap = cap ? 2 * cap : 4096;
            buf = realloc(buf, cap);
            if (!buf) {
                fprintf(stderr, "out of memory\n");
                exit(1);
            }
        }
        n = fread(buf + len, 1, cap - len, f);
        len += n;
    } while (n > 0);
    fclose(f);
    /* as libFuzzer does: a private copy of exactly len bytes */
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    memcpy(copy, buf, len);
    free(buf);
    fflush(stdout);
    LLVMFuzzerTestOneInput(copy, len);
    free(copy);
    printf("ok %u - %s\n", tests, path);
    fflush(stdout);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_path(const char *path)
{
    struct stat st;
    DIR *d;
    struct dirent *de;
    char **names = NULL;
    size_t n = 0, cap = 0;

    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        run_file(path);
        return;
    }
    d = opendir(path);
    if (!d) {
        run_file(path);
        return;
    }
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') {
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            names = realloc(names, cap * sizeof(*names));
            if (!names) {
                fprintf(stderr, "out of memory\n");
                exit(1);
            }
        }
        names[n] = malloc(strlen(path) + strlen(de->d_name) + 2);
        if (!names[n]) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        sprintf(names[n], "%s/%s", path, de->d_name);
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof(*names), cmp_str);
    for (size_t i = 0; i < n; i++) {
        run_file(names[i]);
        free(names[i]);
    }
    free(names);
}

int main(int argc, char **argv)
{
    if (LLVMFuzzerInitialize) {
        LLVMFuzzerInitialize(&argc, &argv);
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--tap") != 0) {
            run_path(argv[i]);
        }
    }
    if (tests == 0) {
        printf("not ok 1 - no input given\n");
        tests = failed = 1;
    }
    printf("1..%u\n", tests);
    return failed ? 1 : 0;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the tests of the tool on a sysfs tree of their own share: files
 * written into the tree, the tree removed again (symlinks as links, not
 * followed), and the built tool (PTT_TOOL) run on it.
 */
#ifndef TEST_SYSFS_SUPPORT_H
#define TEST_SYSFS_SUPPORT_H

#include <stdbool.h>
#include <glib.h>

/* dir/name with len bytes of data (-1: a NUL-terminated text) */
void tsys_put(const char *dir, const char *name, const void *data,
              gssize len);
void tsys_put_text(const char *dir, const char *name, const char *text);
void tsys_rm_rf(const char *path);

/* The tool of PTT_TOOL with args (NULL-terminated): its exit status */
int tsys_run_tool(const char *const *args, char **out, char **err);
/* Whether PTT_TOOL is set; the test is skipped (and says so) if not */
bool tsys_have_tool(void);

#endif

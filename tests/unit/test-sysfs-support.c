/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared by the tests of the tool on a sysfs tree (test-sysfs-support.h).
 */
#include <sys/wait.h>
#include <glib/gstdio.h>

#include "test-sysfs-support.h"

void tsys_put(const char *dir, const char *name, const void *data,
              gssize len)
{
    g_autofree char *p = g_build_filename(dir, name, NULL);

    g_assert_true(g_file_set_contents(p, data, len, NULL));
}

void tsys_put_text(const char *dir, const char *name, const char *text)
{
    tsys_put(dir, name, text, -1);
}

void tsys_rm_rf(const char *path)
{
    GDir *d;
    const char *n;

    if (g_file_test(path, G_FILE_TEST_IS_SYMLINK)) {
        g_remove(path);
        return;
    }
    d = g_dir_open(path, 0, NULL);
    if (d) {
        while ((n = g_dir_read_name(d))) {
            g_autofree char *p = g_build_filename(path, n, NULL);

            tsys_rm_rf(p);
        }
        g_dir_close(d);
    }
    g_remove(path);
}

int tsys_run_tool(const char *const *args, char **out, char **err)
{
    const char *tool = g_getenv("PTT_TOOL");
    GPtrArray *argv = g_ptr_array_new();
    GError *ge = NULL;
    int status;

    g_ptr_array_add(argv, (char *)tool);
    for (unsigned i = 0; args[i]; i++) {
        g_ptr_array_add(argv, (char *)args[i]);
    }
    g_ptr_array_add(argv, NULL);
    g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, NULL,
                               G_SPAWN_DEFAULT, NULL, NULL, out, err,
                               &status, &ge));
    g_assert_no_error(ge);
    g_ptr_array_free(argv, TRUE);
    g_assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

bool tsys_have_tool(void)
{
    if (!g_getenv("PTT_TOOL")) {
        g_test_skip("PTT_TOOL not set");
        return false;
    }
    return true;
}

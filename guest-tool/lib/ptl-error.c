/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Errors of libpcie-telemetry and the library's version.
 */
#include <stdarg.h>
#include <stdio.h>

#include "pcie-telemetry.h"
#include "ptl-config.h"

ptl_err ptl_set_error(ptl_error *err, ptl_err code, const char *fmt, ...)
{
    va_list ap;

    if (!err) {
        return code;
    }
    err->code = code;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    /*
     * the message is one line: a stray newline would break the tool's
     * "pcie-telemetry: <message>" output
     */
    for (char *p = err->msg; *p; p++) {
        if (*p == '\n' || *p == '\r') {
            *p = ' ';
        }
    }
    return code;
}

const char *ptl_err_name(ptl_err code)
{
    switch (code) {
    case PTL_OK:
        return "ok";
    case PTL_E_INTERNAL:
        return "internal error";
    case PTL_E_USAGE:
        return "usage";
    case PTL_E_NO_CARD:
        return "no card";
    case PTL_E_PERM:
        return "permission";
    case PTL_E_DEVTREE:
        return "device tree";
    case PTL_E_NO_NODE:
        return "no telemetry node";
    case PTL_E_BAR:
        return "BAR";
    case PTL_E_MAGIC:
        return "wrong magic";
    case PTL_E_VERSION:
        return "unsupported version";
    case PTL_E_BUSY:
        return "busy";
    case PTL_E_GONE:
        return "card gone";
    case PTL_E_PMU:
        return "PMU";
    case PTL_E_NO_FLIT:
        return "no flit-mode link";
    case PTL_E_NO_PTT:
        return "no PTT trace";
    }
    return "unknown error";
}

const char *ptl_version_string(void)
{
    return PTL_VERSION_STRING;
}

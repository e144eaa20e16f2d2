/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QOM types of the traffic generators, one per model of ptm-gen.h:
 *
 *   -object telemetry-traffic-pattern,id=t0,rq-frame-bytes=256,...
 *   -device ndk-pcie-telemetry,traffic=t0
 *
 * Every parameter is a property and can be changed with qom-set while the
 * guest runs; the change applies from the card's next PCIe drain window.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "qemu/module.h"
#include "qom/object_interfaces.h"

#include "ptm-transfers.h"
#include "telemetry-traffic.h"

static const PtmGenModel *traffic_model(TelemetryTraffic *t)
{
    return TELEMETRY_TRAFFIC_GET_CLASS(t)->model;
}

const PtmSourceOps *telemetry_traffic_attach(TelemetryTraffic *t,
                                             const PtmGeometry *geo,
                                             TelemetryTrafficSync *sync,
                                             void *card, void **opaque,
                                             Error **errp)
{
    g_autofree char *err = NULL;

    if (t->gen) {
        error_setg(errp, "traffic object '%s' already drives another card",
                   object_get_canonical_path_component(OBJECT(t)));
        return NULL;
    }
    t->gen = ptm_gen_new(traffic_model(t), t->params, geo, &err);
    if (!t->gen) {
        error_setg(errp, "traffic object '%s': %s",
                   object_get_canonical_path_component(OBJECT(t)), err);
        return NULL;
    }
    t->sync = sync;
    t->card = card;
    *opaque = t->gen;
    return &ptm_gen_source_ops;
}

void telemetry_traffic_detach(TelemetryTraffic *t)
{
    if (t->gen) {
        /* keep the newest values for the next card */
        memcpy(t->params, ptm_gen_params(t->gen),
               traffic_model(t)->params_size);
        ptm_gen_free(t->gen);
        t->gen = NULL;
    }
    t->sync = NULL;
    t->card = NULL;
}

void *telemetry_traffic_save(TelemetryTraffic *t, size_t *len)
{
    return ptm_gen_save(t->gen, len);
}

char *telemetry_traffic_load(TelemetryTraffic *t, const void *buf,
                             size_t len)
{
    return ptm_gen_load(t->gen, buf, len);
}

static void traffic_prop_get(Object *obj, Visitor *v, const char *name,
                             void *opaque, Error **errp)
{
    TelemetryTraffic *t = TELEMETRY_TRAFFIC(obj);
    const PtmParamDesc *d = opaque;
    const void *params = t->gen ? ptm_gen_params(t->gen) : t->params;
    int64_t val = ptm_param_get(d, params);
    bool b = val;
    uint32_t u = val;
    int32_t i = val;
    char *str;

    switch (d->type) {
    case PTM_PARAM_STR:
        str = (char *)ptm_param_get_str(d, params);
        visit_type_str(v, name, &str, errp);
        break;
    case PTM_PARAM_BOOL:
        visit_type_bool(v, name, &b, errp);
        break;
    case PTM_PARAM_U32:
        visit_type_uint32(v, name, &u, errp);
        break;
    case PTM_PARAM_I32:
        visit_type_int32(v, name, &i, errp);
        break;
    }
}

static void traffic_prop_set(Object *obj, Visitor *v, const char *name,
                             void *opaque, Error **errp)
{
    TelemetryTraffic *t = TELEMETRY_TRAFFIC(obj);
    const PtmGenModel *m = traffic_model(t);
    const PtmParamDesc *d = opaque;
    g_autofree char *err = NULL;
    g_autofree void *copy = NULL;
    uint64_t now, from;
    g_autofree char *str = NULL;
    int64_t val = 0;
    bool b;
    uint32_t u;
    int32_t i;

    switch (d->type) {
    case PTM_PARAM_STR:
        if (!visit_type_str(v, name, &str, errp)) {
            return;
        }
        break;
    case PTM_PARAM_BOOL:
        if (!visit_type_bool(v, name, &b, errp)) {
            return;
        }
        val = b;
        break;
    case PTM_PARAM_U32:
        if (!visit_type_uint32(v, name, &u, errp)) {
            return;
        }
        val = u;
        break;
    case PTM_PARAM_I32:
        if (!visit_type_int32(v, name, &i, errp)) {
            return;
        }
        val = i;
        break;
    }
    err = ptm_param_check(d, val);
    if (err) {
        error_setg(errp, "%s: %s", object_get_typename(obj), err);
        return;
    }
    copy = g_memdup2(t->gen ? ptm_gen_params(t->gen) : t->params,
                     m->params_size);
    if (d->type == PTM_PARAM_STR) {
        err = ptm_param_set_str(d, copy, str);
        if (err) {
            error_setg(errp, "%s: %s", object_get_typename(obj), err);
            return;
        }
    } else {
        ptm_param_set(d, copy, val);
    }
    if (!t->gen) {
        memcpy(t->params, copy, m->params_size);
        return;
    }
    /* live: from the card's next PCIe drain window on */
    t->sync(t->card, &now, &from);
    err = ptm_gen_set_params(t->gen, copy, from, now);
    if (err) {
        error_setg(errp, "%s: %s", object_get_typename(obj), err);
    }
}

static void traffic_instance_init(Object *obj)
{
    TelemetryTraffic *t = TELEMETRY_TRAFFIC(obj);
    const PtmGenModel *m = traffic_model(t);

    t->params = g_malloc0(m->params_size);
    m->defaults(t->params);
}

static void traffic_instance_finalize(Object *obj)
{
    TelemetryTraffic *t = TELEMETRY_TRAFFIC(obj);

    ptm_gen_free(t->gen);
    g_free(t->params);
}

static void traffic_model_class_init(ObjectClass *oc, void *data)
{
    TelemetryTrafficClass *tc = TELEMETRY_TRAFFIC_CLASS(oc);
    const PtmGenModel *m = data;
    static const char *const type_name[] = {
        "bool", "uint32", "int32", "string",
    };

    tc->model = m;
    for (unsigned i = 0; i < m->nparams; i++) {
        const PtmParamDesc *d = &m->params[i];

        object_class_property_add(oc, d->name, type_name[d->type],
                                  traffic_prop_get, traffic_prop_set,
                                  NULL, (void *)d);
        object_class_property_set_description(oc, d->name, d->desc);
    }
}

static const TypeInfo telemetry_traffic_info = {
    .name = TYPE_TELEMETRY_TRAFFIC,
    .parent = TYPE_OBJECT,
    .abstract = true,
    .instance_size = sizeof(TelemetryTraffic),
    .instance_init = traffic_instance_init,
    .instance_finalize = traffic_instance_finalize,
    .class_size = sizeof(TelemetryTrafficClass),
    .interfaces = (InterfaceInfo[]) {
        { TYPE_USER_CREATABLE },
        { }
    },
};

static void telemetry_traffic_register_model(const PtmGenModel *m)
{
    g_autofree char *name = g_strdup_printf("telemetry-traffic-%s", m->name);
    TypeInfo info = {
        .name = name,
        .parent = TYPE_TELEMETRY_TRAFFIC,
        .instance_size = sizeof(TelemetryTraffic),
        .class_init = traffic_model_class_init,
        .class_data = (void *)m,
    };

    type_register_static(&info);   /* copies what it keeps */
}

static void telemetry_traffic_register_types(void)
{
    type_register_static(&telemetry_traffic_info);
    for (unsigned i = 0; ptm_gen_models[i]; i++) {
        telemetry_traffic_register_model(ptm_gen_models[i]);
    }
    /* not a signal model: the DMA engine's transfer log plays it */
    telemetry_traffic_register_model(&ptm_model_transfers);
}

type_init(telemetry_traffic_register_types)

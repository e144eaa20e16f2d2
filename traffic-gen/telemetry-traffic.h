/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QOM face of the traffic sources: an abstract user-creatable object type
 * "telemetry-traffic" that a card takes through its "traffic" link, and
 * the built-in sources derived from it (telemetry-traffic-<model>).
 */
#ifndef TELEMETRY_TRAFFIC_H
#define TELEMETRY_TRAFFIC_H

#include "qom/object.h"
#include "ptm-signals.h"

#define TYPE_TELEMETRY_TRAFFIC "telemetry-traffic"
OBJECT_DECLARE_TYPE(TelemetryTraffic, TelemetryTrafficClass, TELEMETRY_TRAFFIC)

struct TelemetryTraffic {
    Object parent_obj;
    bool attached;              /* one card per traffic object */
};

struct TelemetryTrafficClass {
    ObjectClass parent_class;
    /*
     * Bind the source to a card of this geometry. Fails with a message if
     * the parameters do not fit the card. Returns the ops the card's core
     * calls, their opaque pointer in *opaque.
     */
    const PtmSourceOps *(*attach)(TelemetryTraffic *t, const PtmGeometry *geo,
                                  void **opaque, Error **errp);
};

const PtmSourceOps *telemetry_traffic_attach(TelemetryTraffic *t,
                                             const PtmGeometry *geo,
                                             void **opaque, Error **errp);
void telemetry_traffic_detach(TelemetryTraffic *t);

#endif

/*
 * tests/unit/test_plugin_volume_util.c - helpers of the volume plugin
 * groups (see test_plugin_volume_util.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/errors.h"
#include "kube/codec/jsonstream.h"
#include "kube/types/storage.h"
#include "kube/machinery/factory_testing.h"
#include "plugins/plugins.h"
#include "unit/test_plugin_volume_util.h"

static const kube_codec *const codecs[PLUGIN_VOL_KINDS] = {
    &kube_pv_codec,
    &kube_pvc_codec,
    &kube_storage_class_codec,
    &kube_csi_node_codec,
};

vt_world *vt_world_new(void)
{
    vt_world *w = calloc(1, sizeof(*w));

    assert_non_null(w);
    assert_int_equal(kube_factory_new(NULL, &w->informers), KUBE_OK);
    assert_int_equal(plugin_vol_listers_new(w->informers, &w->l), KUBE_OK);
    return w;
}

void vt_world_free(vt_world *w)
{
    if (!w)
        return;
    plugin_vol_listers_release(w->l);
    kube_factory_free(w->informers);
    free(w);
}

/* The fake factory's lister of kind k. */
static kube_lister *lister(vt_world *w, plugin_vol_kind k)
{
    kube_lister *l = NULL;
    assert_int_equal(plugin_vol_lister_of(w->informers, k, &l), KUBE_OK);
    return l;
}

void vt_put(vt_world *w, plugin_vol_kind k, const char *json)
{
    cJSON *j = cJSON_Parse(tp_json(json)), *meta;
    kube_object *obj = NULL;

    if (!j)
        fail_msg("bad test JSON: %s", json);
    meta = cJSON_GetObjectItem(j, "metadata");
    assert_non_null(meta);
    if (k == PLUGIN_VOL_PVC && !cJSON_GetObjectItem(meta, "namespace"))
        cJSON_AddStringToObject(meta, "namespace", "default");
    if (!cJSON_GetObjectItem(meta, "resourceVersion"))
        cJSON_AddStringToObject(meta, "resourceVersion", "1");
    assert_int_equal(codecs[k]->decode(j, &obj), KUBE_OK);
    cJSON_Delete(j);
    assert_int_equal(kube_lister_apply(lister(w, k), KUBE_WATCH_MODIFIED, obj), KUBE_OK);
    kube_object_unref(obj);
}

void vt_putf(vt_world *w, plugin_vol_kind k, const char *fmt, ...)
{
    char buf[8192];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    vt_put(w, k, buf);
}

void vt_delete(vt_world *w, plugin_vol_kind k, const char *ns, const char *name)
{
    kube_object *obj = kube_lister_get(lister(w, k), ns, name);

    assert_non_null(obj);
    assert_int_equal(kube_lister_apply(lister(w, k), KUBE_WATCH_DELETED, obj), KUBE_OK);
    kube_object_unref(obj);
}

/* The constructor taking explicit listers of the volume plugin desc. */
static plugin_vol_new_fn vol_new_fn(const fw_plugin_desc *desc)
{
    if (desc == &plugin_volume_binding)
        return plugin_volume_binding_new;
    if (desc == &plugin_volume_zone)
        return plugin_volume_zone_new;
    if (desc == &plugin_volume_restrictions)
        return plugin_volume_restrictions_new;
    return plugin_node_volume_limits_new;
}

tp_plugin *vt_plugin(const fw_plugin_desc *desc, vt_world *w, const char *args, fw_snapshot *snap)
{
    tp_plugin *p = calloc(1, sizeof(*p));
    cJSON *in = args ? cJSON_Parse(tp_json(args)) : NULL, *defaulted = NULL;
    char err[1024] = "";
    int rc;

    assert_non_null(p);
    p->desc = desc;
    p->handle.profile_name = "default-scheduler";
    p->handle.svc.snapshot = snap;
    if (desc->default_args && desc->default_args(in, &defaulted, err, sizeof(err)) != KUBE_OK)
        fail_msg("default_args: %s", err);
    rc = vol_new_fn(desc)(defaulted, &p->handle, w->l, &p->self, err, sizeof(err));
    if (rc != KUBE_OK)
        fail_msg("create: %s", err);
    cJSON_Delete(in);
    cJSON_Delete(defaulted);
    return p;
}

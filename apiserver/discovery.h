/*
 * apiserver/discovery.h - the fixed documents stickyvm-apiserver serves:
 * the root path list, API discovery (/apis, /apis/subresources.stickyvm.io,
 * /apis/subresources.stickyvm.io/v1, which the aggregator probes to mark the
 * APIService Available) and a minimal OpenAPI v2 (Swagger 2.0) document
 * that the aggregator fetches and merges into the cluster's /openapi/v2.
 *
 * Memory: every function returns static storage (never freed); lengths go
 * to *len when len is non-NULL. Thread-safe.
 */
#ifndef APIS_DISCOVERY_H
#define APIS_DISCOVERY_H

#include <stddef.h>

const char *apis_discovery_root(size_t *len);          /* {"paths":[...]} */
const char *apis_discovery_group_list(size_t *len);    /* APIGroupList */
const char *apis_discovery_group(size_t *len);         /* APIGroup */
const char *apis_discovery_resource_list(size_t *len); /* APIResourceList */
const char *apis_openapi_v2(size_t *len);
/* The strong ETag of the OpenAPI document ("\"<sha256 hex>\""), for the
 * aggregator's If-None-Match revalidation. */
const char *apis_openapi_v2_etag(void);

#endif

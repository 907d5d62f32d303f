#include "kube/lws.h"

#include <libwebsockets.h>
#include <string.h>

#include "kube/log.h"

static void lws_to_klog(int level, const char *line)
{
    size_t n = strlen(line);

    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        n--;
    if (level & LLL_ERR)
        KLOG_ERROR("lws: %.*s", (int)n, line);
    else
        KLOG_V(1, "lws: %.*s", (int)n, line);
}

void kube_lws_route_logs(void)
{
    lws_set_log_level(LLL_ERR | LLL_WARN, lws_to_klog);
}

int kube_lws_is_any_address(const char *a)
{
    return !a || !*a || !strcmp(a, "0.0.0.0") || !strcmp(a, "::");
}

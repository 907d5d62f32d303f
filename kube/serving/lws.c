/*
 * kube/serving/lws.c - libwebsockets glue shared by the daemons' servers (lws.h).
 */
#include "kube/util/clock.h"
#include "kube/serving/lws.h"

#include <libwebsockets.h>
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>

#include "kube/util/buf.h"
#include "kube/util/log.h"

#define ACCEPT_LOG_INTERVAL_MS 5000

static pthread_mutex_t accept_log_mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t accept_log_next_ms;
static unsigned long accept_log_held;

/* Lets an accept() failure through once per interval; *held receives the
 * number of failures suppressed since the last line. */
static int accept_log_allowed(unsigned long *held)
{
    int64_t now = kube_now_ms();
    int allowed = 0;

    pthread_mutex_lock(&accept_log_mu);
    if (now >= accept_log_next_ms) {
        allowed = 1;
        *held = accept_log_held;
        accept_log_held = 0;
        accept_log_next_ms = now + ACCEPT_LOG_INTERVAL_MS;
    } else {
        accept_log_held++;
    }
    pthread_mutex_unlock(&accept_log_mu);
    return allowed;
}

static void lws_to_klog(int level, const char *line)
{
    size_t n = strlen(line);
    unsigned long held = 0;

    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        n--;
    if (strstr(line, "accept: ") && !accept_log_allowed(&held))
        return;
    if (held)
        KLOG_ERROR("lws: %.*s (and %lu more accept failures not logged)", (int)n, line, held);
    else if (level & LLL_ERR)
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

int kube_lws_connection_limit(int wanted, int reserve)
{
    struct rlimit rl;
    rlim_t room;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return wanted;
    room = rl.rlim_cur > (rlim_t)reserve ? rl.rlim_cur - (rlim_t)reserve : 1;
    return room < (rlim_t)wanted ? (int)room : wanted;
}

/*
 * tests/unit/test_apiserver_pin.c - apiserver/pin.c: the log line of a pin
 * request, with a refused ?node= quoted as asked for and cut.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/pin.h"
#include "apiserver/request.h"
#include "kube/util/errors.h"
#include "kube/util/log_testing.h"

/* The log line of a pin request whose target parsed into a route. */
static char *pin_log_line(const char *target, int code)
{
    apis_route r;
    char msg[256], *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    assert_non_null(f);
    assert_int_equal(apis_route_parse(target, &r, msg, sizeof(msg)), KUBE_OK);
    klog_testing_set_output(f);
    apis_pin_log(&r, "admin", code, 0.001);
    klog_testing_set_output(NULL);
    fclose(f);
    apis_route_free(&r);
    return text;
}

/* A refused ?node= is logged as asked for, quoted as Go's %q and cut; a
 * valid one as it is (it used to log "node=: 422"). */
static void pin_log_quotes_a_refused_node(void **state)
{
    static const char vm[] = "/apis/subresources.stickyvm.io/v1/namespaces/demo/"
                             "virtualmachines/vm-web/pin?node=";
    char target[600], *line;
    (void)state;

    snprintf(target, sizeof(target), "%sa%%20b%%22c", vm);
    line = pin_log_line(target, 422);
    assert_non_null(strstr(line, "pin demo/vm-web user=admin node=\"a b\\\"c\": 422"));
    free(line);
    snprintf(target, sizeof(target), "%snode-2&dryRun=All", vm);
    line = pin_log_line(target, 200);
    assert_non_null(strstr(line, "user=admin node=node-2 dryRun=All: 200"));
    free(line);
    snprintf(target, sizeof(target), "%s%0300d", vm, 0); /* too long */
    line = pin_log_line(target, 422);
    assert_non_null(strstr(line, " node=\"0000000000000000000000000000000000000000000000000000000"
                                 "000000000\"...: 422"));
    free(line);
    snprintf(target, sizeof(target), "%s", vm); /* ?node= empty */
    line = pin_log_line(target, 422);
    assert_non_null(strstr(line, " node=\"\": 422"));
    free(line);
}

int test_group_apiserver_pin(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pin_log_quotes_a_refused_node),
    };
    return cmocka_run_group_tests_name("apiserver_pin", tests, NULL, NULL);
}

/*
 * tests/emulator/authz_ext.h - what the authz plug-in (authz.c) asks of
 * RBAC (rbac.c) and impersonation (impersonation.c).
 *
 * authz.c calls emu_authz_ext_authenticated() from its authenticator for
 * every request that authenticated, asks emu_authz_ext_take_refusal()
 * first in its authorizer, and ORs emu_rbac_allows() into every
 * decision it makes (the emulator's own requests and SubjectAccessReviews),
 * after its built-in defaults and policy file, as kube-apiserver unions its
 * authorizers; emu_rbac_rules() adds RBAC's rules to a
 * SelfSubjectRulesReview.
 *
 * Threads: the functions are called concurrently from connection threads.
 * Memory: nothing is kept beyond a call except per-thread request facts.
 */
#ifndef STICKYVM_EMU_AUTHZ_EXT_H
#define STICKYVM_EMU_AUTHZ_EXT_H

#include <stddef.h>

#include "emu.h"

/* Asks the authorizer whether u may do a (1) or not (0). */
typedef int (*emu_authz_may_fn)(const emu_user *u, const emu_attrs *a);

/* For a request whose requester u authenticated: applies Impersonate-User,
 * -Group, -Extra-* and -Uid (each checked with may as the requester, verb
 * "impersonate" on users / serviceaccounts / groups / userextras / uids, as
 * kube-apiserver does) and notes for RBAC the name a list or watch asks
 * for with fieldSelector=metadata.name=NAME (kube-apiserver's RequestInfo).
 * Returns EMU_AUTHN_OK (u replaced by the impersonated user, or left as the
 * requester when there is no impersonation or it was refused: then
 * emu_authz_ext_take_refusal() gives what to answer 403 for) or
 * EMU_AUTHN_FAIL (malformed, e.g. groups without a user: answered 401). u
 * is owned by the caller before and after. */
int emu_authz_ext_authenticated(const emu_request *req, emu_user *u, emu_authz_may_fn may);

/* After emu_authz_ext_authenticated() on this thread: when it refused an
 * impersonation, returns 1 once and fills *out with the acting-as
 * attributes kube-apiserver answers 403 for (verb "impersonate", e.g.
 * resource "users", name "alice"); else 0. The strings stay valid until
 * the next request on this thread. */
int emu_authz_ext_take_refusal(emu_attrs *out);

/* 1 when the stored ClusterRoles, Roles and their bindings allow the user
 * (name, groups) to do a, else 0. Always 0 unless the emulator runs with
 * --authorization-mode=RBAC. Strings borrowed. */
int emu_rbac_allows(const char *user, char *const *groups, size_t n_groups, const emu_attrs *a);

/* Appends to resource_rules and nonresource_rules (JSON arrays) the rules
 * the stored bindings give the user in namespace ns (ClusterRoleBindings,
 * and RoleBindings of ns when ns is not empty), as kube-apiserver's RBAC
 * RulesFor lists them. Nothing unless --authorization-mode=RBAC. */
void emu_rbac_rules(const char *user, char *const *groups, size_t n_groups, const char *ns,
                    cJSON *resource_rules, cJSON *nonresource_rules);

/* rbac.c: remembers (per thread) the fieldSelector metadata.name of the
 * current request when it is a list or watch; "" otherwise. */
void emu_rbac_note_request(const emu_request *req);

#endif

/* sm-bench-poll: the CPU time of each step the coordinator takes for one idle poll. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/clock.h"
#include "proto/envelope.h"
#include "proto/msg.h"

#define ROUNDS 20000

/* CPU time of this process, so that other work on the machine moves the figures little. */
static double cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void say(const char *what, double t0, unsigned n)
{
    printf("  %-44s %8.2f us\n", what, (cpu_us() - t0) / n);
}

/* An idle poll as sm-swarm sends one after registering: no facts, no results. */
static char *idle_poll(const char *name, size_t *len)
{
    sm_poll p;
    sm_error err = {0};
    memset(&p, 0, sizeof p);
    snprintf(p.agent, sizeof p.agent, "%s", name);
    snprintf(p.boot, sizeof p.boot, "0123456789abcdef0123456789abcdef");
    p.seq = 42;
    p.state = SM_AGENT_IDLE;
    return sm_msg_poll_encode(&p, len, &err);
}

int main(void)
{
    uint8_t fleet[SM_KEY_LEN], key[SM_KEY_LEN];
    for (size_t i = 0; i < sizeof fleet; i++)
        fleet[i] = (uint8_t)(i * 7 + 1);
    const char *name = "swarm-04242";
    sm_error err = {0};
    size_t blen = 0, elen = 0;
    char *body = idle_poll(name, &blen);
    if (!body || sm_key_derive(fleet, name, key, &err) != 0) {
        fprintf(stderr, "sm-bench-poll: %s\n", err.msg);
        return 1;
    }
    const uint64_t now = (uint64_t)sm_wall_ms();
    char *env = sm_env_seal(key, SM_DIR_TO_COORDINATOR, name, now, body, blen, &elen, NULL, &err);
    if (!env) {
        fprintf(stderr, "sm-bench-poll: %s\n", err.msg);
        return 1;
    }
    printf("sm-bench-poll: CPU time per call, %d calls each (poll %zu bytes sealed)\n", ROUNDS,
           elen);
    unsigned bad = 0;
    double t0 = cpu_us();
    for (unsigned i = 0; i < ROUNDS; i++)
        bad += sm_key_derive(fleet, name, key, &err) != 0;
    say("sm_key_derive (HKDF-SHA256)", t0, ROUNDS);
    sm_env e;
    t0 = cpu_us();
    for (unsigned i = 0; i < ROUNDS; i++)
        bad += sm_env_scan(env, elen, &e, &err) != SM_REJ_NONE;
    say("sm_env_scan", t0, ROUNDS);
    t0 = cpu_us();
    for (unsigned i = 0; i < ROUNDS; i++)
        bad += sm_env_verify(key, SM_DIR_TO_COORDINATOR, &e, now, &err) != SM_REJ_NONE;
    say("sm_env_verify (HMAC-SHA256)", t0, ROUNDS);
    t0 = cpu_us();
    for (unsigned i = 0; i < ROUNDS; i++) {
        sm_poll p;
        bad += sm_msg_poll_decode(e.body, e.body_len, &p, &err) != 0;
        sm_msg_poll_fini(&p);
    }
    say("sm_msg_poll_decode", t0, ROUNDS);
    sm_poll_reply r;
    memset(&r, 0, sizeof r);
    snprintf(r.to, sizeof r.to, "%s", name);
    snprintf(r.poll, sizeof r.poll, "%s", e.nonce);
    snprintf(r.store, sizeof r.store, "0123456789abcdef0123456789abcdef");
    size_t rlen = 0;
    char *reply = NULL;
    t0 = cpu_us();
    for (unsigned i = 0; i < ROUNDS; i++) {
        free(reply);
        bad += (reply = sm_msg_reply_encode(&r, &rlen, &err)) == NULL;
    }
    say("sm_msg_reply_encode (an empty reply)", t0, ROUNDS);
    t0 = cpu_us();
    for (unsigned i = 0; i < ROUNDS; i++) {
        size_t sl = 0;
        char *sealed =
            sm_env_seal(key, SM_DIR_TO_AGENT, SM_COORDINATOR, now, reply, rlen, &sl, NULL, &err);
        bad += sealed == NULL;
        free(sealed);
    }
    say("sm_env_seal (HMAC-SHA256 and a nonce)", t0, ROUNDS);
    free(reply);
    free(env);
    free(body);
    if (bad) {
        fprintf(stderr, "sm-bench-poll: %u calls failed: %s\n", bad, err.msg);
        return 1;
    }
    return 0;
}

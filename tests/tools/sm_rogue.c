/* sm-rogue: sends the coordinator messages it must refuse (tests only).
 *   sm-rogue URL KEYFILE wrong-key|replay|oversize|deep|garbage|reserved
 * wrong-key: a well-formed poll sealed with a random key. reserved: a valid poll from an agent
 * named "coordinator". replay: a valid poll (agent
 * "rogue-replay"), then the same bytes again. oversize: 300 KiB. deep: valid MAC around a body
 * nested 40 deep. garbage: not JSON. Prints what it sent; exits 0 when everything was sent. */
#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/envelope.h"
#include "proto/msg.h"

static uint64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Each message goes on a fresh REQ socket: a refused request gets no answer, and a REQ socket
 * would otherwise wait for it. */
static int send_raw(const char *url, const char *data, size_t len, int want_reply)
{
    int s = nn_socket(AF_SP, NN_REQ);
    int ms = 2000;
    nn_setsockopt(s, NN_SOL_SOCKET, NN_RCVTIMEO, &ms, sizeof ms);
    nn_setsockopt(s, NN_SOL_SOCKET, NN_SNDTIMEO, &ms, sizeof ms);
    if (s < 0 || nn_connect(s, url) < 0 || nn_send(s, data, len, 0) < 0) {
        fprintf(stderr, "sm-rogue: send: %s\n", nn_strerror(nn_errno()));
        nn_close(s);
        return 1;
    }
    char *buf = NULL;
    int n = nn_recv(s, &buf, NN_MSG, 0);
    printf("sent %zu bytes, %s\n", len, n >= 0 ? "answered" : "no answer");
    if (n >= 0)
        nn_freemsg(buf);
    nn_close(s);
    return want_reply && n < 0;
}

static char *poll_body(const char *agent, size_t *len)
{
    sm_poll p;
    sm_error err = {0};
    memset(&p, 0, sizeof p);
    snprintf(p.agent, sizeof p.agent, "%s", agent);
    memset(p.boot, 'a', SM_BOOT_HEX);
    return sm_msg_poll_encode(&p, len, &err);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr,
                "usage: sm-rogue URL KEYFILE wrong-key|replay|oversize|deep|garbage|reserved\n");
        return 2;
    }
    const char *url = argv[1], *what = argv[3];
    uint8_t key[SM_KEY_LEN];
    sm_error err = {0};
    if (sm_key_load(argv[2], key, &err) != 0) {
        fprintf(stderr, "sm-rogue: %s\n", err.msg);
        return 2;
    }
    size_t blen, elen;
    char *body = NULL, *env = NULL;
    int rc = 0;
    if (strcmp(what, "wrong-key") == 0) {
        uint8_t bad[SM_KEY_LEN];
        RAND_bytes(bad, sizeof bad);
        body = poll_body("rogue-key", &blen);
        env = sm_env_seal(bad, "rogue-key", wall_ms(), body, blen, &elen, &err);
        rc = send_raw(url, env, elen, 0);
    } else if (strcmp(what, "replay") == 0) {
        body = poll_body("rogue-replay", &blen);
        env = sm_env_seal(key, "rogue-replay", wall_ms(), body, blen, &elen, &err);
        rc = send_raw(url, env, elen, 1) || send_raw(url, env, elen, 0);
    } else if (strcmp(what, "oversize") == 0) {
        elen = 300 * 1024;
        env = malloc(elen + 1);
        memset(env, ' ', elen);
        env[0] = '{';
        env[elen - 1] = '}';
        rc = send_raw(url, env, elen, 0);
    } else if (strcmp(what, "deep") == 0) {
        char deep[128];
        int n = 40;
        for (int i = 0; i < n; i++)
            deep[i] = '[';
        for (int i = 0; i < n; i++)
            deep[n + i] = ']';
        env = sm_env_seal(key, "rogue-deep", wall_ms(), deep, 2 * (size_t)n, &elen, &err);
        rc = send_raw(url, env, elen, 0);
    } else if (strcmp(what, "reserved") == 0) {
        body = poll_body("coordinator", &blen);
        env = sm_env_seal(key, "coordinator", wall_ms(), body, blen, &elen, &err);
        rc = send_raw(url, env, elen, 0);
    } else if (strcmp(what, "garbage") == 0) {
        rc = send_raw(url, "hello", 5, 0);
    } else {
        fprintf(stderr, "sm-rogue: unknown case '%s'\n", what);
        rc = 2;
    }
    if (!env && rc == 0 && strcmp(what, "garbage") != 0) {
        fprintf(stderr, "sm-rogue: %s\n", err.msg);
        rc = 1;
    }
    free(body);
    free(env);
    return rc;
}

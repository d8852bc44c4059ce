/* sockmatrix: the command-line client of the coordinator's HTTP API. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>

#include "coordinator/cli/cli.h"

int main(int argc, char **argv)
{
    sm_cli_opts o;
    sm_error err = {0};
    if (sm_cli_parse(argc, argv, getenv(SM_CLI_URL_ENV), &o, &err) != 0) {
        fprintf(stderr, "sockmatrix: %s\n", err.msg);
        return 2;
    }
    if (o.cmd == SM_CLI_HELP) {
        char part[4096];
        if (o.help_cmd && sm_cli_usage_of(o.help_cmd, part, sizeof part) > 0)
            fputs(part, stdout);
        else
            fputs(sm_cli_usage(), stdout);
        return 0;
    }
    if (o.cmd == SM_CLI_VERSION) {
        printf("sockmatrix %s\n", SM_VERSION);
        return 0;
    }
    char token[SM_CLI_TOKEN_MAX];
    if (o.token_file && sm_cli_load_token(o.token_file, token, sizeof token, &err) != 0) {
        fprintf(stderr, "sockmatrix: %s\n", err.msg);
        return 2;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fputs("sockmatrix: cannot initialise libcurl\n", stderr);
        return 1;
    }
    int rc = sm_cli_exec(&o, o.token_file ? token : NULL);
    curl_global_cleanup();
    return rc;
}

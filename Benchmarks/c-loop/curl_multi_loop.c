// The ceiling for CurlTransport: libcurl's multi interface driven by a plain C loop, fetching one
// URL with `concurrency` transfers in flight (at most `connections` connections to the host, as
// CurlTransport allows), discarding the bodies, for `seconds`. No decoding, no Swift.
//
// It calls libcurl through Errand's own loader (Sources/CErrandCurl), so it needs no libcurl
// development package and uses the same libcurl.so.4 as CurlTransport.
//
// Usage: curl-multi-loop URL CONCURRENCY SECONDS [CONNECTIONS [HTTP_VERSION [CA_FILE]]]
// (HTTP_VERSION: libcurl's CURL_HTTP_VERSION_… number, 2 for HTTP/1.1, 4 for HTTP/2 over TLS.)
// Prints: requests-per-second processor-microseconds-per-request
#include "errand_curl.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum {
  option_write_data = 10001,
  option_url = 10002,
  option_write_function = 20011,
  option_no_signal = 99,
  option_http_version = 84,
  option_ca_info = 10065,
  multi_option_max_host_connections = 7,
};

static size_t discard(char *data, size_t size, size_t count, void *received) {
  (void)data;
  *(size_t *)received += size * count;
  return size * count;
}

static double seconds_now(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s URL CONCURRENCY SECONDS [CONNECTIONS [HTTP_VERSION [CA_FILE]]]\n",
            argv[0]);
    return 2;
  }
  const char *url = argv[1];
  int concurrency = atoi(argv[2]);
  double seconds = atof(argv[3]);
  long connections = argc > 4 ? atol(argv[4]) : 16;
  long http_version = argc > 5 ? atol(argv[5]) : 0;
  const char *ca_file = argc > 6 ? argv[6] : NULL;
  const char *missing = errand_curl_load();
  if (missing) {
    fprintf(stderr, "libcurl: %s\n", missing);
    return 1;
  }
  void *multi = errand_curl_multi_init();
  errand_curl_multi_setopt_long(multi, multi_option_max_host_connections, connections);
  size_t received = 0;
  void **handles = calloc((size_t)concurrency, sizeof(void *));
  for (int i = 0; i < concurrency; i++) {
    handles[i] = errand_curl_easy_init();
    errand_curl_easy_setopt_pointer(handles[i], option_url, url);
    errand_curl_easy_setopt_data_callback(handles[i], option_write_function, discard);
    errand_curl_easy_setopt_pointer(handles[i], option_write_data, &received);
    errand_curl_easy_setopt_long(handles[i], option_no_signal, 1);
    if (http_version) errand_curl_easy_setopt_long(handles[i], option_http_version, http_version);
    if (ca_file) errand_curl_easy_setopt_pointer(handles[i], option_ca_info, ca_file);
    errand_curl_multi_add_handle(multi, handles[i]);
  }
  long completed = 0, failed = 0;
  clock_t cpu_start = clock();
  double start = seconds_now();
  double deadline = start + seconds;
  while (seconds_now() < deadline) {
    int running = 0;
    errand_curl_multi_perform(multi, &running);
    void *easy = NULL;
    int result = 0;
    while (errand_curl_multi_next_done(multi, &easy, &result) == 1) {
      if (result == 0) completed++; else failed++;
      // Again, on the same handle: its connection is reused.
      errand_curl_multi_remove_handle(multi, easy);
      errand_curl_multi_add_handle(multi, easy);
    }
    errand_curl_multi_poll(multi, 100);
  }
  double elapsed = seconds_now() - start;
  double cpu = (double)(clock() - cpu_start) / CLOCKS_PER_SEC;
  printf("%.1f %.1f\n", (double)completed / elapsed, cpu * 1e6 / (double)(completed ? completed : 1));
  if (failed) fprintf(stderr, "%ld transfers failed\n", failed);
  for (int i = 0; i < concurrency; i++) {
    errand_curl_multi_remove_handle(multi, handles[i]);
    errand_curl_easy_cleanup(handles[i]);
  }
  errand_curl_multi_cleanup(multi);
  free(handles);
  return 0;
}

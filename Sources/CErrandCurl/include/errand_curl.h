// The few libcurl functions CurlTransport uses, loaded from libcurl.so.4 at run time.
//
// Declared here rather than taken from <curl/curl.h> so that building needs no libcurl
// development package: FoundationNetworking already loads the same libcurl. Each variadic libcurl
// function (curl_easy_setopt, curl_easy_getinfo, curl_multi_setopt) gets typed wrappers, which
// Swift can call; the wrappers call libcurl with the argument type each option documents.
#ifndef ERRAND_CURL_H
#define ERRAND_CURL_H

#include <stddef.h>
#include <stdint.h>

/// Load libcurl (once; later calls return the first outcome).
/// Returns NULL when it is loaded, else a message saying what is missing.
const char *_Nullable errand_curl_load(void);

void *_Nullable errand_curl_easy_init(void);
void errand_curl_easy_cleanup(void *_Nonnull easy);
/// Every option back to its default; the handle keeps its buffers and caches.
void errand_curl_easy_reset(void *_Nonnull easy);
int errand_curl_easy_setopt_long(void *_Nonnull easy, int option, long value);
int errand_curl_easy_setopt_pointer(void *_Nonnull easy, int option, const void *_Nullable value);
int errand_curl_easy_setopt_offset(void *_Nonnull easy, int option, int64_t value);
/// A `CURLOPTTYPE_BLOB` option: libcurl copies `length` bytes from `data` before returning.
int errand_curl_easy_setopt_blob(
    void *_Nonnull easy, int option, const void *_Nullable data, size_t length);
typedef size_t (*errand_curl_data_callback)(char *_Nonnull, size_t, size_t, void *_Nullable);
int errand_curl_easy_setopt_data_callback(
    void *_Nonnull easy, int option, errand_curl_data_callback _Nullable callback);
/// libcurl's transfer progress callback (CURLOPT_XFERINFOFUNCTION): totals and counts so far,
/// downloaded then uploaded; returns 0 to go on.
typedef int (*errand_curl_progress_callback)(
    void *_Nullable, int64_t, int64_t, int64_t, int64_t);
int errand_curl_easy_setopt_progress_callback(
    void *_Nonnull easy, int option, errand_curl_progress_callback _Nullable callback);
int errand_curl_easy_pause(void *_Nonnull easy, int bitmask);
/// curl_easy_getinfo for a `long`, a `curl_off_t` and a string result; 0 when it answered.
int errand_curl_easy_getinfo_long(void *_Nonnull easy, int info, long *_Nonnull value);
int errand_curl_easy_getinfo_offset(void *_Nonnull easy, int info, int64_t *_Nonnull value);
int errand_curl_easy_getinfo_string(
    void *_Nonnull easy, int info, const char *_Nullable *_Nonnull value);
const char *_Nonnull errand_curl_easy_strerror(int code);

void *_Nullable errand_curl_slist_append(void *_Nullable list, const char *_Nonnull string);
void errand_curl_slist_free_all(void *_Nullable list);

void *_Nullable errand_curl_multi_init(void);
void errand_curl_multi_cleanup(void *_Nonnull multi);
int errand_curl_multi_setopt_long(void *_Nonnull multi, int option, long value);
int errand_curl_multi_add_handle(void *_Nonnull multi, void *_Nonnull easy);
int errand_curl_multi_remove_handle(void *_Nonnull multi, void *_Nonnull easy);
int errand_curl_multi_perform(void *_Nonnull multi, int *_Nonnull running);
int errand_curl_multi_poll(void *_Nonnull multi, int timeout_ms);
int errand_curl_multi_wakeup(void *_Nonnull multi);
/// The next finished transfer: returns 1 and sets `easy` and `result`, or returns 0.
int errand_curl_multi_next_done(
    void *_Nonnull multi, void *_Nullable *_Nonnull easy, int *_Nonnull result);

#endif

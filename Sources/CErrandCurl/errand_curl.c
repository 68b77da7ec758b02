#include "errand_curl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>

// Shapes from <curl/curl.h> (libcurl 7.62 and later; stable ABI, soname libcurl.so.4).
typedef void CURL;
typedef void CURLM;
typedef int CURLcode;
typedef int CURLMcode;
typedef struct {
  int msg;
  CURL *easy_handle;
  union {
    void *whatever;
    CURLcode result;
  } data;
} CURLMsg;
struct curl_slist;
struct curl_waitfd;

#define ERRAND_CURLMSG_DONE 1
#define ERRAND_CURL_GLOBAL_DEFAULT 3

static struct {
  CURLcode (*global_init)(long);
  CURL *(*easy_init)(void);
  void (*easy_cleanup)(CURL *);
  void (*easy_reset)(CURL *);
  CURLcode (*easy_setopt)(CURL *, int, ...);
  CURLcode (*easy_pause)(CURL *, int);
  CURLcode (*easy_getinfo)(CURL *, int, ...);
  const char *(*easy_strerror)(CURLcode);
  struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
  void (*slist_free_all)(struct curl_slist *);
  CURLM *(*multi_init)(void);
  CURLMcode (*multi_cleanup)(CURLM *);
  CURLMcode (*multi_setopt)(CURLM *, int, ...);
  CURLMcode (*multi_add_handle)(CURLM *, CURL *);
  CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
  CURLMcode (*multi_perform)(CURLM *, int *);
  CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd *, unsigned int, int, int *);
  CURLMcode (*multi_wakeup)(CURLM *);
  CURLMsg *(*multi_info_read)(CURLM *, int *);
} curl;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *failure = "libcurl was not loaded";

static void load(void) {
  void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
  if (!library) library = dlopen("libcurl.so", RTLD_NOW | RTLD_LOCAL);
  if (!library) library = dlopen("libcurl.4.dylib", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    failure = "libcurl.so.4 could not be loaded (install libcurl4, which FoundationNetworking also needs)";
    return;
  }
#define FIND(field, name)                                                   \
  *(void **)(&curl.field) = dlsym(library, name);                           \
  if (!curl.field) {                                                        \
    failure = "libcurl.so.4 lacks " name " (CurlTransport needs libcurl 7.68 or later)"; \
    return;                                                                 \
  }
  FIND(global_init, "curl_global_init")
  FIND(easy_init, "curl_easy_init")
  FIND(easy_cleanup, "curl_easy_cleanup")
  FIND(easy_reset, "curl_easy_reset")
  FIND(easy_setopt, "curl_easy_setopt")
  FIND(easy_pause, "curl_easy_pause")
  FIND(easy_getinfo, "curl_easy_getinfo")
  FIND(easy_strerror, "curl_easy_strerror")
  FIND(slist_append, "curl_slist_append")
  FIND(slist_free_all, "curl_slist_free_all")
  FIND(multi_init, "curl_multi_init")
  FIND(multi_cleanup, "curl_multi_cleanup")
  FIND(multi_setopt, "curl_multi_setopt")
  FIND(multi_add_handle, "curl_multi_add_handle")
  FIND(multi_remove_handle, "curl_multi_remove_handle")
  FIND(multi_perform, "curl_multi_perform")
  FIND(multi_poll, "curl_multi_poll")
  FIND(multi_wakeup, "curl_multi_wakeup")
  FIND(multi_info_read, "curl_multi_info_read")
#undef FIND
  if (curl.global_init(ERRAND_CURL_GLOBAL_DEFAULT) != 0) {
    failure = "curl_global_init failed";
    return;
  }
  failure = NULL;
}

const char *errand_curl_load(void) {
  pthread_once(&once, load);
  return failure;
}

void *errand_curl_easy_init(void) { return curl.easy_init(); }
void errand_curl_easy_cleanup(void *easy) { curl.easy_cleanup(easy); }
void errand_curl_easy_reset(void *easy) { curl.easy_reset(easy); }
int errand_curl_easy_setopt_long(void *easy, int option, long value) {
  return curl.easy_setopt(easy, option, value);
}
int errand_curl_easy_setopt_pointer(void *easy, int option, const void *value) {
  return curl.easy_setopt(easy, option, value);
}
// libcurl's `struct curl_blob` (7.71 and later), as <curl/curl.h> declares it.
struct errand_curl_blob {
  void *data;
  size_t len;
  unsigned int flags;
};
int errand_curl_easy_setopt_blob(void *easy, int option, const void *data, size_t length) {
  // CURL_BLOB_COPY: libcurl copies the bytes before returning, so they need not outlive the call.
  struct errand_curl_blob blob = {(void *)data, length, 1};
  return curl.easy_setopt(easy, option, &blob);
}
int errand_curl_easy_setopt_offset(void *easy, int option, int64_t value) {
  return curl.easy_setopt(easy, option, (int64_t)value);
}
int errand_curl_easy_setopt_data_callback(void *easy, int option, errand_curl_data_callback callback) {
  return curl.easy_setopt(easy, option, callback);
}
int errand_curl_easy_setopt_progress_callback(
    void *easy, int option, errand_curl_progress_callback callback) {
  return curl.easy_setopt(easy, option, callback);
}
int errand_curl_easy_pause(void *easy, int bitmask) { return curl.easy_pause(easy, bitmask); }
int errand_curl_easy_getinfo_long(void *easy, int info, long *value) {
  return curl.easy_getinfo(easy, info, value);
}
int errand_curl_easy_getinfo_offset(void *easy, int info, int64_t *value) {
  return curl.easy_getinfo(easy, info, value);
}
int errand_curl_easy_getinfo_string(void *easy, int info, const char **value) {
  return curl.easy_getinfo(easy, info, value);
}
const char *errand_curl_easy_strerror(int code) { return curl.easy_strerror(code); }

void *errand_curl_slist_append(void *list, const char *string) {
  return curl.slist_append(list, string);
}
void errand_curl_slist_free_all(void *list) { curl.slist_free_all(list); }

void *errand_curl_multi_init(void) { return curl.multi_init(); }
void errand_curl_multi_cleanup(void *multi) { curl.multi_cleanup(multi); }
int errand_curl_multi_setopt_long(void *multi, int option, long value) {
  return curl.multi_setopt(multi, option, value);
}
int errand_curl_multi_add_handle(void *multi, void *easy) { return curl.multi_add_handle(multi, easy); }
int errand_curl_multi_remove_handle(void *multi, void *easy) {
  return curl.multi_remove_handle(multi, easy);
}
int errand_curl_multi_perform(void *multi, int *running) { return curl.multi_perform(multi, running); }
int errand_curl_multi_poll(void *multi, int timeout_ms) {
  return curl.multi_poll(multi, NULL, 0, timeout_ms, NULL);
}
int errand_curl_multi_wakeup(void *multi) { return curl.multi_wakeup(multi); }
int errand_curl_multi_next_done(void *multi, void **easy, int *result) {
  int left = 0;
  CURLMsg *message;
  while ((message = curl.multi_info_read(multi, &left)) != NULL) {
    if (message->msg == ERRAND_CURLMSG_DONE) {
      *easy = message->easy_handle;
      *result = message->data.result;
      return 1;
    }
  }
  return 0;
}

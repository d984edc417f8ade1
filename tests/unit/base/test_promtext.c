/* Unit tests for lib/base/promtext.c: the exposition text, byte for byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "klog/base/promtext.h"

/* out's bytes as a string (the buffer is not NUL-terminated). */
static const char *
text(klog_buf_t *out)
{
	klog_buf_put(out, "", 1);
	assert_false(out->failed);
	out->len--;
	return (const char *)out->data;
}

/* Backslash, double quote and newline are escaped; nothing else is. */
static void
test_escape(void **state)
{
	char s[64];

	(void)state;
	assert_int_equal(klog_promtext_escape("a\\b\"c\nd", s, sizeof(s)), 10);
	assert_string_equal(s, "a\\\\b\\\"c\\nd");
	assert_int_equal(klog_promtext_escape("app.v1_x-y\t", s, sizeof(s)), 11);
	assert_string_equal(s, "app.v1_x-y\t");
	/* Too small: cut, NUL-terminated, the length it would need. */
	assert_int_equal(klog_promtext_escape("\"\"\"", s, 4), 6);
	assert_string_equal(s, "\\\"\\");
	assert_int_equal(klog_promtext_escape("", s, sizeof(s)), 0);
	assert_string_equal(s, "");
}

static void
test_labels(void **state)
{
	klog_promtext_labels_t l;
	klog_buf_t out;

	(void)state;
	klog_buf_init(&out);
	klog_promtext_labels_init(&l);
	klog_promtext_label(&l, "topic", "we\"ird\\\n");
	klog_promtext_label_int(&l, "partition", 3);
	assert_string_equal(l.text,
	    "topic=\"we\\\"ird\\\\\\n\",partition=\"3\"");
	assert_false(l.truncated);
	klog_promtext_int(&out, "klog_x_total", &l, 42);
	klog_promtext_int(&out, "klog_y", NULL, -1);
	klog_promtext_double(&out, "klog_z", NULL, 0.5);
	assert_string_equal(text(&out),
	    "klog_x_total{topic=\"we\\\"ird\\\\\\n\",partition=\"3\"} 42\n"
	    "klog_y -1\nklog_z 0.5\n");
	klog_buf_free(&out);
}

/* A label that does not fit is left out whole: never half an escape. */
static void
test_labels_truncated(void **state)
{
	klog_promtext_labels_t l;
	char big[KLOG_PROMTEXT_LABELS_MAX];

	(void)state;
	memset(big, '"', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	klog_promtext_labels_init(&l);
	klog_promtext_label(&l, "api", "produce");
	klog_promtext_label(&l, "topic", big);
	assert_true(l.truncated);
	assert_string_equal(l.text, "api=\"produce\"");
}

static void
test_family(void **state)
{
	klog_buf_t out;

	(void)state;
	klog_buf_init(&out);
	klog_promtext_family(&out, "klog_a", "gauge", "a \\ b\nc \"q\"");
	assert_string_equal(text(&out),
	    "# HELP klog_a a \\\\ b\\nc \"q\"\n# TYPE klog_a gauge\n");
	klog_buf_free(&out);
}

static const int64_t bounds[] = { 1000, 1000000 };

/* Buckets are cumulative, bounds in seconds, the sum in seconds. */
static void
test_hist(void **state)
{
	klog_promtext_hist_t h, h2;
	klog_promtext_labels_t l;
	klog_buf_t out;

	(void)state;
	klog_buf_init(&out);
	klog_promtext_hist_init(&h, bounds, 2);
	klog_promtext_hist_observe(&h, 1000);      /* on a bound: in it */
	klog_promtext_hist_observe(&h, 1001);
	klog_promtext_hist_observe(&h, 2000000000);
	klog_promtext_hist_observe(&h, -5);
	klog_promtext_hist_init(&h2, bounds, 2);
	klog_promtext_hist_observe(&h2, 500);
	klog_promtext_hist_add(&h, &h2);
	klog_promtext_labels_init(&l);
	klog_promtext_label(&l, "api", "fetch");
	klog_promtext_hist(&out, "klog_s", &l, &h);
	assert_string_equal(text(&out),
	    "klog_s_bucket{api=\"fetch\",le=\"1e-06\"} 3\n"
	    "klog_s_bucket{api=\"fetch\",le=\"0.001\"} 4\n"
	    "klog_s_bucket{api=\"fetch\",le=\"+Inf\"} 5\n"
	    "klog_s_sum{api=\"fetch\"} 2.000002501\n"
	    "klog_s_count{api=\"fetch\"} 5\n");
	klog_buf_free(&out);
}

/* The shared latency buckets ascend and fit. */
static void
test_latency_bounds(void **state)
{
	(void)state;
	assert_true(klog_promtext_latency_nbounds <= KLOG_PROMTEXT_BUCKETS_MAX);
	for (size_t i = 1; i < klog_promtext_latency_nbounds; i++)
		assert_true(klog_promtext_latency_bounds[i - 1] <
		    klog_promtext_latency_bounds[i]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_labels_truncated),
		cmocka_unit_test(test_family),
		cmocka_unit_test(test_hist),
		cmocka_unit_test(test_latency_bounds),
	};

	return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}

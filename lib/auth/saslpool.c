#include <pthread.h>
#include <stdlib.h>

#include "klog/auth/saslpool.h"
#include "klog/base/error.h"

struct klog_saslpool_job {
	klog_sasl_t *s;
	void (*done)(void *tag, klog_sasl_t *s);
	void *tag;
	int cancelled;
	klog_saslpool_job_t *next;
};

struct klog_saslpool {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	int stop;
	size_t count;               /* jobs in todo and done */
	klog_saslpool_job_t *todo, **todo_tail;
	klog_saslpool_job_t *done;
	void (*notify)(void *);
	void *arg;
};

static void *
worker(void *arg)
{
	klog_saslpool_t *p = arg;
	klog_saslpool_job_t *j;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (p->todo == NULL && !p->stop)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->stop)
			break;
		j = p->todo;
		if ((p->todo = j->next) == NULL)
			p->todo_tail = &p->todo;
		pthread_mutex_unlock(&p->mu);
		klog_sasl_check(j->s);
		pthread_mutex_lock(&p->mu);
		j->next = p->done;
		p->done = j;
		pthread_mutex_unlock(&p->mu);
		p->notify(p->arg);
		pthread_mutex_lock(&p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int
klog_saslpool_new(void (*notify)(void *), void *arg, klog_saslpool_t **out)
{
	klog_saslpool_t *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (p == NULL)
		return -KLOG_ENOMEM;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->todo_tail = &p->todo;
	p->notify = notify;
	p->arg = arg;
	if (pthread_create(&p->thread, NULL, worker, p) != 0) {
		pthread_cond_destroy(&p->cv);
		pthread_mutex_destroy(&p->mu);
		free(p);
		return -KLOG_ENOMEM;
	}
	*out = p;
	return 0;
}

int
klog_saslpool_submit(klog_saslpool_t *p, klog_sasl_t *s,
    void (*done)(void *tag, klog_sasl_t *s), void *tag,
    klog_saslpool_job_t **job)
{
	klog_saslpool_job_t *j;

	*job = NULL;
	pthread_mutex_lock(&p->mu);
	if (p->count >= KLOG_SASLPOOL_QUEUE ||
	    (j = calloc(1, sizeof(*j))) == NULL) {
		pthread_mutex_unlock(&p->mu);
		return -KLOG_EBUSY;
	}
	j->s = s;
	j->done = done;
	j->tag = tag;
	*p->todo_tail = j;
	p->todo_tail = &j->next;
	p->count++;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	*job = j;
	return 0;
}

void
klog_saslpool_cancel(klog_saslpool_t *p, klog_saslpool_job_t *job)
{
	pthread_mutex_lock(&p->mu);
	job->cancelled = 1;
	pthread_mutex_unlock(&p->mu);
}

void
klog_saslpool_release(klog_saslpool_t *p, klog_saslpool_job_t *job,
    klog_sasl_t *s)
{
	if (job != NULL)
		klog_saslpool_cancel(p, job);
	else
		klog_sasl_free(s);
}

void
klog_saslpool_drain(klog_saslpool_t *p)
{
	klog_saslpool_job_t *j, *next;

	pthread_mutex_lock(&p->mu);
	j = p->done;
	p->done = NULL;
	pthread_mutex_unlock(&p->mu);
	for (; j != NULL; j = next) {
		next = j->next;
		pthread_mutex_lock(&p->mu);
		p->count--;
		pthread_mutex_unlock(&p->mu);
		if (j->cancelled)
			klog_sasl_free(j->s);
		else
			j->done(j->tag, j->s);
		free(j);
	}
}

static void
free_list(klog_saslpool_job_t *j)
{
	klog_saslpool_job_t *next;

	for (; j != NULL; j = next) {
		next = j->next;
		klog_sasl_free(j->s);
		free(j);
	}
}

void
klog_saslpool_free(klog_saslpool_t *p)
{
	if (p == NULL)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	free_list(p->todo);
	free_list(p->done);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce deterministic simulator: the runner.
 *
 *   sim [--seeds N] [--seed S] [--scenario stream|rc|uc|all]
 *       [--faults all|none|loss,burst,reorder,dup,corrupt,blackhole,
 *                 flap,spike,rnr,dereg,vanish,qperr,reset,spurious,access,
 *                 stale,invread,badwqe,badwqe2,rnrx]
 *       [--ops N] [--coverage] [--digest] [--quiet] [-v]
 *
 * Runs seeds S, S+1, ..., S+N-1 (S defaults to 1). Each run is fully
 * determined by its seed and the options: on a failure the seed and a
 * one-line replay command are printed. The last line is
 * "N passed, N failed". --digest prints each run's trace digest (every
 * draw, event and packet: sim_digest()) and one over all runs, the same
 * in every build (selftests/sim/determinism.sh).
 */
#include <getopt.h>
#include <time.h>
#include "sim.h"
#include "ep.h"

jmp_buf sim_fail_jmp;
char sim_fail_msg[512];

static const char * const cov_names[COV_MAX] = {
#define SIM_COV_NAME(n, d) #n,
	SIM_COV_LIST(SIM_COV_NAME)
};
static const char * const cov_desc[COV_MAX] = {
#define SIM_COV_DESC(n, d) d,
	SIM_COV_LIST(SIM_COV_DESC)
};

static void usage(void)
{
	fprintf(stderr,
		"usage: sim [--seeds N] [--seed S] [--scenario stream|rc|uc|all]\n"
		"           [--faults SPEC] [--ops N] [--coverage] [--digest]\n"
		"           [--strict]\n"
		"           [--first-fail] [--requester sim|core|engines] [--pair]\n"
		"           [--quiet] [-v]\n"
		"SPEC: all (default: each fault on in some runs), none, or a\n"
		"      list of loss,burst,reorder,dup,corrupt,blackhole,flap,\n"
		"      spike,rnr,dereg,vanish,qperr,reset,spurious,access,stale,\n"
		"      invread,badwqe,badwqe2,rnrx\n");
	exit(2);
}

static const char *pick_scenario(const char *s, u64 seed)
{
	if (!strcmp(s, "all"))
		return seed % 3 ? "rc" : "stream";
	return s;
}

/* One run; 0 = pass. */
static int run_one(const struct sim_opts *o)
{
	const char *scn = pick_scenario(o->scenario, o->seed);
	static const u32 mtus[] = { 64, 128, 256, 512, 1024 };
	volatile int failed = 0;

	memset(&W, 0, sizeof(W));
	W.o = o;
	rng_seed(&W.rng, o->seed);
	rng_seed(&W.frng, o->seed ^ 0x76616e6973680000ULL);
	if (faults_parse(o->faults, &W.f, &W.rng)) {
		fprintf(stderr, "bad --faults %s\n", o->faults);
		exit(2);
	}
	W.fab.nodes = rng_range(&W.rng, 2, SIM_MAX_NODES);
	W.fab.prop_us = rng_range(&W.rng, 1, 50);
	W.fab.ns_per_byte = rng_range(&W.rng, 1, 8);	/* 1..8 Gb/s */
	W.fab.cap_bytes = rng_range(&W.rng, 4, 512) * 1024;
	W.fab.ecn_bytes = W.fab.cap_bytes / rng_range(&W.rng, 2, 16);
	for (u32 a = 0; a < SIM_MAX_NODES; a++)
		for (u32 b = 0; b < SIM_MAX_NODES; b++)
			W.fab.link[a][b].salt = (u32)rng_next(&W.rng);
	ep_mtu = mtus[rng_below(&W.rng, ARRAY_SIZE(mtus))];
	W.end_by = 600ULL * 1000000;	/* 10 simulated minutes */

	if (!setjmp(sim_fail_jmp)) {
		if (!strcmp(scn, "stream"))
			scn_stream();
		else if (!strcmp(scn, "rc"))
			scn_rc();
		else if (!strcmp(scn, "uc"))
			scn_uc();
		else {
			fprintf(stderr, "unknown scenario %s\n", scn);
			exit(2);
		}
	} else {
		failed = 1;
	}
	if (failed || o->verbose)
		printf("%s seed %llu: %s; %llu events, %llu pkts, %llu us%s%s\n",
		       failed ? "FAIL" : "ok", (unsigned long long)o->seed,
		       W.what, (unsigned long long)W.steps,
		       (unsigned long long)W.pkts, (unsigned long long)W.now,
		       failed ? "\n  " : "", failed ? sim_fail_msg : "");
	if (failed)
		printf("  replay: selftests/sim/sim --seed %llu --scenario %s "
		       "--faults %s --ops %u%s%s%s\n", (unsigned long long)o->seed,
		       scn, o->faults, o->ops, o->strict ? " --strict" : "",
		       o->requester == 1 ? " --requester sim" :
		       o->requester == 2 ? " --requester core" :
		       o->requester == 3 ? " --requester engines" : "",
		       o->pair ? " --pair" : "");
	if (o->digest)
		printf("digest seed %llu: %016llx %s %llu events %llu pkts\n",
		       (unsigned long long)o->seed,
		       (unsigned long long)W.digest, failed ? "FAIL" : "ok",
		       (unsigned long long)W.steps,
		       (unsigned long long)W.pkts);
	if (W.cleanup)
		W.cleanup();
	W.step_check = NULL;
	sim_world_end();
	return failed;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seeds", required_argument, 0, 'n' },
		{ "seed", required_argument, 0, 's' },
		{ "faults", required_argument, 0, 'f' },
		{ "scenario", required_argument, 0, 'c' },
		{ "ops", required_argument, 0, 'o' },
		{ "coverage", no_argument, 0, 'C' },
		{ "quiet", no_argument, 0, 'q' },
		{ "strict", no_argument, 0, 'S' },
		{ "first-fail", no_argument, 0, 'F' },
		{ "requester", required_argument, 0, 'R' },
		{ "pair", no_argument, 0, 'P' },
		{ "digest", no_argument, 0, 'D' },
		{ "verbose", no_argument, 0, 'v' },
		{ 0 }
	};
	struct sim_opts o = { .seed = 1, .faults = "all", .scenario = "all" };
	u64 nseeds = 1, i, pass = 0, fail = 0, ops = 0, steps = 0, pkts = 0;
	u64 simus = 0, digest = 0;
	bool coverage = false, quiet = false, first_fail = false;
	struct timespec t0, t1;
	int c;

	while ((c = getopt_long(argc, argv, "v", lo, NULL)) != -1) {
		switch (c) {
		case 'n':
			nseeds = strtoull(optarg, NULL, 0);
			break;
		case 's':
			o.seed = strtoull(optarg, NULL, 0);
			break;
		case 'f':
			o.faults = optarg;
			break;
		case 'c':
			o.scenario = optarg;
			break;
		case 'o':
			o.ops = strtoul(optarg, NULL, 0);
			break;
		case 'C':
			coverage = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'S':
			o.strict = true;
			break;
		case 'F':
			first_fail = true;
			break;
		case 'D':
			o.digest = true;
			break;
		case 'P':
			o.pair = true;
			break;
		case 'R':
			o.requester = !strcmp(optarg, "sim") ? 1 :
				      !strcmp(optarg, "core") ? 2 :
				      !strcmp(optarg, "engines") ? 3 : 0;
			break;
		case 'v':
			o.verbose++;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < nseeds; i++) {
		struct sim_opts r = o;

		r.seed = o.seed + i;
		if (run_one(&r))
			fail++;
		else
			pass++;
		ops += W.ops_done;
		steps += W.steps;
		pkts += W.pkts;
		simus += W.now;
		digest = (digest ^ W.digest) * 0x9e3779b97f4a7c15ULL;
		if (fail && first_fail) {
			nseeds = i + 1;
			break;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!quiet)
		printf("sim: %llu runs, %llu operations, %llu events, %llu packets, "
		       "%.1f simulated s, %.1f s wall\n",
		       (unsigned long long)nseeds, (unsigned long long)ops,
		       (unsigned long long)steps, (unsigned long long)pkts,
		       simus / 1e6, (t1.tv_sec - t0.tv_sec) +
		       (t1.tv_nsec - t0.tv_nsec) / 1e9);
	if (o.digest)
		printf("digest: %016llx over %llu runs\n",
		       (unsigned long long)digest, (unsigned long long)nseeds);
	if (coverage) {
		u32 n = 0;

		printf("coverage (states and transitions reached):\n");
		for (c = 0; c < COV_MAX; c++)
			printf("  %-20s %12llu  %s\n", cov_names[c],
			       (unsigned long long)sim_cov[c], cov_desc[c]);
		printf("unreached:");
		for (c = 0; c < COV_MAX; c++)
			if (!sim_cov[c]) {
				printf(" %s", cov_names[c]);
				n++;
			}
		printf("%s\n", n ? "" : " none");
		rc_coverage();
	}
	printf("%llu passed, %llu failed\n", (unsigned long long)pass,
	       (unsigned long long)fail);
	return fail ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0
/* sockcopy send HOST PORT FILE | recv PORT FILE: a file over one TCP
 * stream, with plain socket calls (what librspreload.so intercepts). */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int copy(int in, int out)
{
	static char buf[65536];
	ssize_t n, w, o;

	while ((n = read(in, buf, sizeof(buf))) > 0)
		for (o = 0; o < n; o += w)
			if ((w = write(out, buf + o, n - o)) <= 0)
				return perror("write"), 1;
	return n < 0 ? (perror("read"), 1) : 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int s, c, f, one = 1, rc;

	if (argc == 5 && !strcmp(argv[1], "send")) {
		inet_pton(AF_INET, argv[2], &a.sin_addr);
		a.sin_port = htons(atoi(argv[3]));
		f = open(argv[4], O_RDONLY);
		s = socket(AF_INET, SOCK_STREAM, 0);
		if (f < 0 || s < 0 || connect(s, (void *)&a, sizeof(a)))
			return perror("send"), 1;
		rc = copy(f, s);
		shutdown(s, SHUT_WR);
		/* wait for the receiver's close: all data is in */
		while (read(s, &one, sizeof(one)) > 0)
			;
		close(s);
		return rc;
	}
	if (argc == 4 && !strcmp(argv[1], "recv")) {
		a.sin_port = htons(atoi(argv[2]));
		f = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		s = socket(AF_INET, SOCK_STREAM, 0);
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (f < 0 || s < 0 || bind(s, (void *)&a, sizeof(a)) || listen(s, 1))
			return perror("recv"), 1;
		c = accept(s, NULL, NULL);
		if (c < 0)
			return perror("accept"), 1;
		rc = copy(c, f);
		close(f);
		close(c);
		close(s);
		return rc;
	}
	fprintf(stderr, "usage: sockcopy send HOST PORT FILE | recv PORT FILE\n");
	return 2;
}

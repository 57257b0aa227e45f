/* IDA* with the Manhattan distance for the 8- and 15-puzzle, in the judge format.
 *
 * Reads boards from standard input, one per line (9 or 16 tokens, the blank as
 * x or 0, tiles 1..n-1), and prints one line per board: the blank's moves
 * (u d l r) to the standard goal (tiles in order, blank last), or "unsolvable".
 * Works one board per process or many (the harness's batch mode): it answers
 * each line as soon as it is read and flushes.
 *
 * Optimal: IDA* with an admissible, consistent heuristic. h is updated per move
 * (only the moved tile changes its distance) and the move undoing the previous
 * one is never generated. Written for npuzzle-harness as an example of an
 * external solver; not tuned (no pattern databases, no linear conflicts).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CELLS 16
#define MAX_DEPTH 100
#define FOUND -1

static int side, cells;
static int board[MAX_CELLS];
static int dist[MAX_CELLS][MAX_CELLS]; /* dist[tile][cell] */
static char path[MAX_DEPTH + 1];
static int found_length;
static const int drow[4] = {-1, 0, 0, 1};
static const int dcol[4] = {0, -1, 1, 0};
static const char name[4] = {'u', 'l', 'r', 'd'};

static int search(int blank, int g, int h, int bound, int back) {
    int f = g + h;
    if (f > bound) return f;
    if (h == 0) { found_length = g; return FOUND; }
    if (g >= MAX_DEPTH) return 1 << 20;
    int best = 1 << 20;
    int r = blank / side, c = blank % side;
    for (int m = 0; m < 4; m++) {
        if (m == back) continue; /* the move that undoes the last one */
        int nr = r + drow[m], nc = c + dcol[m];
        if (nr < 0 || nr >= side || nc < 0 || nc >= side) continue;
        int target = nr * side + nc, tile = board[target];
        int nh = h - dist[tile][target] + dist[tile][blank];
        board[blank] = tile;
        board[target] = 0;
        path[g] = name[m];
        int t = search(target, g + 1, nh, bound, 3 - m);
        board[target] = tile;
        board[blank] = 0;
        if (t == FOUND) return FOUND;
        if (t < best) best = t;
    }
    return best;
}

static int solvable(void) {
    int inversions = 0, blank_row = 0;
    for (int i = 0; i < cells; i++) {
        if (board[i] == 0) { blank_row = i / side; continue; }
        for (int j = i + 1; j < cells; j++)
            if (board[j] && board[j] < board[i]) inversions++;
    }
    if (side % 2) return inversions % 2 == 0;
    /* even width: the blank's row distance from the goal row counts too */
    return (inversions + (side - 1 - blank_row)) % 2 == 0;
}

static int parse(char *line) {
    int seen[MAX_CELLS] = {0}, n = 0;
    for (char *tok = strtok(line, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n")) {
        if (n == MAX_CELLS) return 0;
        int v;
        if (!strcmp(tok, "x") || !strcmp(tok, "X")) v = 0;
        else { char *end; v = (int)strtol(tok, &end, 10); if (*end) return 0; }
        board[n++] = v;
    }
    if (n != 9 && n != 16) return 0;
    cells = n;
    side = n == 9 ? 3 : 4;
    for (int i = 0; i < n; i++) {
        if (board[i] < 0 || board[i] >= n || seen[board[i]]) return 0;
        seen[board[i]] = 1;
    }
    return 1;
}

int main(void) {
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        if (strspn(line, " \t\r\n") == strlen(line)) continue; /* blank line */
        if (!parse(line)) {
            fprintf(stderr, "bad board\n");
            return 2;
        }
        for (int t = 1; t < cells; t++)
            for (int i = 0; i < cells; i++)
                dist[t][i] = abs(i / side - (t - 1) / side) + abs(i % side - (t - 1) % side);
        if (!solvable()) { puts("unsolvable"); fflush(stdout); continue; }
        int blank = 0, h = 0;
        for (int i = 0; i < cells; i++) {
            if (board[i] == 0) blank = i;
            else h += dist[board[i]][i];
        }
        int bound = h, t;
        while ((t = search(blank, 0, h, bound, -1)) != FOUND) bound = t;
        path[found_length] = '\0';
        puts(path);
        fflush(stdout);
    }
    return 0;
}

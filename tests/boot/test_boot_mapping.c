/* The PMI_process_mapping parser: block, cyclic, repeated and bad input. */
#include <stdio.h>
#include <string.h>

#include "locus_boot.h"

static int errs;

static void expect(const char *s, int size, int nnodes, const int *want)
{
    int got[64];
    int n = locus_boot_parse_mapping(s, size, got);
    if (n != nnodes) {
        printf("'%s' (size %d): %d nodes, expected %d\n", s, size, n, nnodes);
        errs++;
        return;
    }
    for (int i = 0; n > 0 && i < size; i++)
        if (got[i] != want[i]) {
            printf("'%s': rank %d on node %d, expected %d\n", s, i, got[i], want[i]);
            errs++;
        }
}

int main(void)
{
    expect("(vector,(0,2,4))", 8, 2, (int[]){ 0, 0, 0, 0, 1, 1, 1, 1 });
    expect("(vector,(0,2,1),(0,2,1))", 4, 2, (int[]){ 0, 1, 0, 1 });
    expect("(vector,(0,1,8))", 8, 1, (int[]){ 0, 0, 0, 0, 0, 0, 0, 0 });
    expect("(vector,(0,2,1))", 5, 2, (int[]){ 0, 1, 0, 1, 0 }); /* repeats */
    expect("(vector,(1,2,2),(0,1,1))", 5, 3, (int[]){ 0, 0, 1, 1, 2 });
    expect(" ( vector , (0,3,1) ) ", 3, 3, (int[]){ 0, 1, 2 });
    expect("(vector,3,1)", 2, 2, (int[]){ 0, 1 });
    expect("", 2, -1, NULL);
    expect("(vector)", 2, -1, NULL);
    expect("(vector,(0,2))", 2, -1, NULL);
    expect("(vector,(0,2,1)", 2, -1, NULL);
    expect("(vector,(0,-2,1))", 2, -1, NULL);
    expect("(vector,(0,0,1))", 2, -1, NULL);
    expect("(blocks,(0,2,1))", 2, -1, NULL);
    expect("(vector,(0,2,1))junk", 2, -1, NULL);
    if (errs == 0)
        printf(" No Errors\n");
    return errs != 0;
}

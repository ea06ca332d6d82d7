/*
 * elf_needed.c — which MPI library a program was linked against: the
 * DT_NEEDED entries of its ELF dynamic section (read from the file, as the
 * loader would, without running it).
 */
#include "launch.h"

#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The file offset of virtual address va, from the PT_LOAD segments. */
static long va_offset(const Elf64_Phdr *ph, int n, Elf64_Addr va)
{
    for (int i = 0; i < n; i++)
        if (ph[i].p_type == PT_LOAD && va >= ph[i].p_vaddr &&
            va < ph[i].p_vaddr + ph[i].p_filesz)
            return (long)(va - ph[i].p_vaddr + ph[i].p_offset);
    return -1;
}

int launch_elf_needs(const char *path, const char *soname)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return 0;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        return 0;
    }
    size_t size = (size_t)st.st_size;
    const unsigned char *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return 0;
    int found = 0;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
        eh->e_phoff + (size_t)eh->e_phnum * sizeof(Elf64_Phdr) <= size) {
        const Elf64_Phdr *ph = (const Elf64_Phdr *)(m + eh->e_phoff);
        for (int i = 0; i < eh->e_phnum && !found; i++) {
            if (ph[i].p_type != PT_DYNAMIC || ph[i].p_offset + ph[i].p_filesz > size)
                continue;
            const Elf64_Dyn *d = (const Elf64_Dyn *)(m + ph[i].p_offset);
            size_t nd = ph[i].p_filesz / sizeof *d;
            long strtab = -1;
            for (size_t k = 0; k < nd && d[k].d_tag != DT_NULL; k++)
                if (d[k].d_tag == DT_STRTAB)
                    strtab = va_offset(ph, eh->e_phnum, d[k].d_un.d_ptr);
            for (size_t k = 0; strtab >= 0 && k < nd && d[k].d_tag != DT_NULL && !found; k++) {
                if (d[k].d_tag != DT_NEEDED)
                    continue;
                size_t off = (size_t)strtab + d[k].d_un.d_val;
                found = off < size && strnlen((const char *)m + off, size - off) < size - off &&
                        strcmp((const char *)m + off, soname) == 0;
            }
        }
    }
    munmap((void *)m, size);
    return found;
}

export const benchKey = 'bench-key-0123456789abcdef'
/** 1,024 bytes of text. */
export const fileContent = 'toolport benchmark line, 64 bytes of text for read_file: 012345\n'.repeat(16)

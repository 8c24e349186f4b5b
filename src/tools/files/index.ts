import { applyEdit, multiEdit, revertEdit } from './edit'
import { deleteFile, listFiles } from './manage'
import { readFile } from './read'
import { writeFile } from './write'

export const fileTools = [readFile, writeFile, applyEdit, multiEdit, revertEdit, deleteFile, listFiles] as const

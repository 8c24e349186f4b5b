/** What a sync between a workspace copy and storage reports; shared by checkout, commit and the mirror. */
export interface FileChange {
  path: string
  change: 'added' | 'modified' | 'deleted'
  size?: number
}

export interface SkippedFile {
  path: string
  reason: string
}

export interface SyncResult {
  changes: FileChange[]
  skipped: SkippedFile[]
}

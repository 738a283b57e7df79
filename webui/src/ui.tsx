// Small shared pieces: messages, confirmation dialog, status badge.
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

export function ErrorBox({ error, onRetry }: { error: string | null; onRetry?: () => void }) {
  if (!error) return null;
  return (
    <div class="error" role="alert">
      <span>{error}</span>
      {onRetry && (
        <button type="button" class="small" onClick={onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <p class="empty-title">{title}</p>
      {children}
    </div>
  );
}

export function Badge({ status }: { status: string }) {
  return <span class={`badge badge-${status}`}>{status}</span>;
}

/** A modal dialog (native <dialog>: focus trap and Escape come with it). */
export function Dialog({
  title,
  open,
  onClose,
  children,
}: {
  title: string;
  open: boolean;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} onClose={onClose} aria-label={title}>
      <h2>{title}</h2>
      {children}
    </dialog>
  );
}

export function Confirm({
  open,
  title,
  message,
  action,
  danger,
  onConfirm,
  onCancel,
  children,
}: {
  open: boolean;
  title: string;
  message: string;
  action: string;
  danger?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
  children?: ComponentChildren;
}) {
  return (
    <Dialog title={title} open={open} onClose={onCancel}>
      <p>{message}</p>
      {children}
      <div class="row end">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" class={danger ? "danger" : "primary"} onClick={onConfirm}>
          {action}
        </button>
      </div>
    </Dialog>
  );
}

export function formatDate(iso: string): string {
  const date = new Date(iso);
  return isNaN(date.getTime()) ? iso : date.toLocaleString();
}

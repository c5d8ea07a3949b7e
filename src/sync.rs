//! Synchronisation helpers shared by every layer.

/// Locks a mutex, recovering the data if a panicking thread poisoned it (a panic in one
/// prompt must not take the rest of the server down).
pub fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

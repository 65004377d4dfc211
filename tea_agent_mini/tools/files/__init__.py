"""Files in the workspace: toolkit_file (files), toolkit_edit and toolkit_apply_patch (edit,
on the patch engine in patch), toolkit_diff_edit and toolkit_diff (diffs, undo), toolkit_save_file
(savefile), toolkit_glob and toolkit_grep (search, gitignore), toolkit_batch_process (batch);
fileio holds the atomic writes they share."""

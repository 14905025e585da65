#pragma once
// The viewer's page of each case of a motion study (`liembs study --views`, docs/viewer.md):
// <output>/views/<case hash>.html, made from the case's record (its motion, drifts and
// constraint violations at the study's sample times) and the case's model, linked from the
// report's table of cases.
#include <liembs/study/results.hpp>

#include <filesystem>
#include <string>

namespace liembs::study {

// Where the page of a case is, relative to the study's output folder ("" for a case without
// one: a failed case, or any case of an algorithm study).
std::string case_view_file(const StudyResults& results, std::size_t case_index);

// Writes the page of every case that has one (case_view_file) into `output`; returns how many.
// The warnings of making the pages (the model's, e.g. a mesh not drawn) are given after them,
// each once with on how many pages it came: "<message> (on 3 of the 4 pages of --views)".
std::size_t write_case_views(const StudyResults& results, const std::filesystem::path& output);

}  // namespace liembs::study
